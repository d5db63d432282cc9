// Package redact masks personal data in free text before it is stored or
// exported: e-mail addresses, phone numbers, payment card numbers and
// Chinese resident identity numbers.
//
// It sits under trace and imports only trace/textnorm (and through it
// golang.org/x/text), so every room can use it: the ledger redacts every violation it writes by default
// (badgerstore.Options.Redact), trace/otelexport redacts what it exports, and the
// guard can redact on its own side of the boundary.
//
// # What is masked
//
//   - E-mail addresses, as "[email]".
//   - Payment card numbers, as "[card]" (or "[card-1111]", keeping the last
//     four digits, with Redactor.CardLast4): 13 to 19 digits written
//     together, or in groups of 3 to 6 digits separated by single or double
//     spaces, dashes or dots, that pass the Luhn check.
//   - Chinese resident identity numbers, as "[id]": 17 digits and a check
//     character (a digit or X), together or as 6-8-4, with a plausible
//     birth date and a valid ISO 7064 MOD 11-2 check character.
//   - Phone numbers, as "[phone]": Chinese mobile numbers (11 digits,
//     1[3-9]…, optionally after +86, 86 or 0086, with any grouping);
//     international numbers written with a leading "+" (7 to 15 digits) or
//     "00" and at least two groups; North American numbers written as
//     3-3-4 groups, such as (415) 555-0100 or 1-800-555-0100; national
//     numbers written with their trunk prefix 0 in two or more groups
//     (020 7946 0958, 03-1234-5678, 0755 8888 6666) that libphonenumber's
//     metadata (github.com/nyaruka/phonenumbers) finds valid for one of
//     the Redactor's Regions (DefaultRegions unless set); and any run of 7
//     to 15 digits written right after a phone label such as "phone": ,
//     tel: , mobile= , 电话： or 手机号 .
//
// Digits may be grouped with spaces, dashes, dots and parentheses.
//
// # Normal form
//
// Matching runs on the text's normal form, so that the way a number or an
// address is written does not hide it: JSON \u escapes are decoded
// (ann\u0040example.com; an escaped quotation mark, backslash or control
// character stays escaped), and the characters that textnorm.Fold turns
// into digits, letters, "@", ".", "-", "+", parentheses or a space are
// folded: full-width digits and letters (１３８…, ｅｘａｍｐｌｅ), the
// full-width and small at signs (＠, ﹫), no-break and ideographic spaces,
// en and em dashes and the minus sign, full-width parentheses and plus;
// zero-width characters are dropped. The masks replace what was written,
// escapes and full-width forms included; the rest of the text comes back
// as it was. Text with none of these characters (Chinese prose with its
// own punctuation included) is matched as it is, at the old cost.
//
// # What is not
//
// Names, postal addresses, secrets and other national identifiers are left
// alone, and so are national phone numbers written together or without
// their trunk prefix (02079460958 and 20 7946 0958 are not masked,
// "tel: 02079460958" is): the checks prefer keeping order numbers, dates,
// versions and amounts readable to guessing. Wrap a Redactor in a function of your own when your data needs
// more; the masks never contain "@" or runs of digits, so a second
// redactor, or a second pass, finds nothing new in them.
//
// # Guarantees
//
// Redact never panics, keeps valid UTF-8 valid, and is idempotent:
// Redact(Redact(s)) == Redact(s), so text redacted by the guard and again by
// the ledger comes out the same. Text with no "@" and fewer than 7 digits
// is returned unchanged without allocating.
//
// # Example
//
//	r := redact.Redactor{CardLast4: true}
//	r.Redact("card 4111 1111 1111 1111, mail ann@example.com")
//	// "card [card-1111], mail [email]"
package redact
