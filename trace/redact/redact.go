package redact

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// Kind is a kind of personal data. Kinds combine as bit flags.
type Kind uint8

// The kinds of personal data a Redactor masks.
const (
	Email Kind = 1 << iota
	Phone
	Card
	NationalID

	// All is every kind.
	All = Email | Phone | Card | NationalID
)

// Masks put in place of what a Redactor finds.
const (
	MaskEmail = "[email]"
	MaskPhone = "[phone]"
	MaskCard  = "[card]"
	MaskID    = "[id]"
)

// Redactor masks personal data in text. The zero value masks every kind
// and keeps no digits of card numbers; it is what String uses. A Redactor
// is a plain value, safe for concurrent use.
type Redactor struct {
	// Skip lists the kinds left unmasked; zero masks all of them.
	Skip Kind
	// CardLast4 keeps the last four digits of a card number, writing
	// "[card-1111]" instead of "[card]". Four digits identify no card on
	// their own and let a support engineer match an entry to a complaint.
	CardLast4 bool
	// Regions are the regions (ISO 3166-1 alpha-2 codes) whose national
	// phone numbers are masked when written without a country code: with
	// their trunk prefix 0, in two or more groups, valid for the region by
	// libphonenumber's metadata. Nil means DefaultRegions; an empty,
	// non-nil slice masks none.
	Regions []string
}

// DefaultRegions are the regions whose national phone numbers a Redactor
// masks unless told otherwise: the regions of the lexicon's languages and
// of most of the project's users, where numbers are written with a trunk
// prefix 0. North American and Chinese mobile numbers are masked whatever
// Regions says.
var DefaultRegions = []string{"GB", "IE", "DE", "AT", "CH", "FR", "BE", "NL", "AU", "NZ", "JP", "KR", "IN", "CN", "TW", "ZA"}

func (r Redactor) regions() []string {
	if r.Regions == nil {
		return DefaultRegions
	}
	return r.Regions
}

// String masks every kind of personal data in s with the zero Redactor.
// It can be passed where a func(string) string is wanted.
func String(s string) string { return Redactor{}.Redact(s) }

// None returns s unchanged: pass it where a redactor is wanted to turn
// redaction off.
func None(s string) string { return s }

// minDigits is the fewest digits any masked number has.
const minDigits = 7

var emailRE = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}`)

// Redact returns s with the personal data r looks for replaced by masks.
// See the package documentation for what is recognised.
//
// Matching runs on the text's normal form (see normalize): JSON \u escapes
// decoded, full-width digits and at signs, odd spaces and dashes folded by
// trace/textnorm, invisible characters dropped. The masks replace what was
// written; the rest of s comes back as it was.
func (r Redactor) Redact(s string) string {
	if r.Skip&All == All {
		return s
	}
	if n, off, ok := normalize(s); ok {
		return r.redactMapped(s, n, off)
	}
	if r.Skip&Email == 0 && strings.IndexByte(s, '@') >= 0 {
		s = emailRE.ReplaceAllLiteralString(s, MaskEmail)
	}
	if r.Skip&(Phone|Card|NationalID) == Phone|Card|NationalID || countDigits(s) < minDigits {
		return s
	}
	var buf [8]span
	return apply(s, r.numbers(s, buf[:0]), nil)
}

// redactMapped redacts s through its normal form n, whose byte k came from
// s[off[k]:]: the spans found in n are masked in s.
func (r Redactor) redactMapped(s, n string, off []int32) string {
	var buf [8]span
	spans := buf[:0]
	scan := n
	if r.Skip&Email == 0 && strings.IndexByte(n, '@') >= 0 {
		if found := emailRE.FindAllStringIndex(n, -1); len(found) > 0 {
			b := []byte(n)
			for _, m := range found {
				spans = append(spans, span{start: m[0], end: m[1], mask: MaskEmail})
				for k := m[0]; k < m[1]; k++ {
					b[k] = '#' // no digit, separator or check character: numbers see a boundary
				}
			}
			scan = string(b)
		}
	}
	if r.Skip&(Phone|Card|NationalID) != Phone|Card|NationalID && countDigits(scan) >= minDigits {
		emails := len(spans)
		spans = r.numbers(scan, spans)
		if emails > 0 && len(spans) > emails {
			slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
		}
	}
	return apply(s, spans, off)
}

// A span of text to mask: bytes [start, end), in the coordinates of the
// text the patterns were matched on.
type span struct {
	start, end int
	mask       string
}

// apply writes s with spans masked. off, when not nil, maps the spans'
// coordinates to s's (see normalize). It returns s itself when there is
// nothing to mask.
func apply(s string, spans []span, off []int32) string {
	if len(spans) == 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	done := 0
	for _, sp := range spans {
		start, end := sp.start, sp.end
		if off != nil {
			start, end = int(off[start]), int(off[end])
		}
		if start < done {
			start = done
		}
		out.WriteString(s[done:start])
		out.WriteString(sp.mask)
		done = end
	}
	out.WriteString(s[done:])
	return out.String()
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// A group is one run of digits in a number token: "+1 (415) 555-0100" has
// the groups 1, 415, 555 and 0100.
type group struct {
	start, end int  // the digits, and an X check character if x, are s[start:end]
	n          int  // number of digits
	x          bool // the digits are followed by an X or x (a Chinese id's check character)
	claim      Kind // the kind of the span this group is part of; 0 if none
	spanEnd    int  // for the first group of a span: the index after its last group
}

// numbers appends to spans the card numbers, ids and phone numbers in s,
// in order.
func (r Redactor) numbers(s string, spans []span) []span {
	var buf [32]group
	budget := nationalChecks
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		gs := scanToken(s, i, buf[:0])
		plus := i > 0 && s[i-1] == '+' || i > 1 && s[i-1] == '(' && s[i-2] == '+'
		if r.claim(s, gs, plus, &budget) {
			spans = r.collect(spans, s, gs, plus)
		}
		i = gs[len(gs)-1].end
	}
	return spans
}

// scanToken reads the number token whose first digit is s[i]: runs of
// digits joined by short separators.
func scanToken(s string, i int, gs []group) []group {
	for {
		k := i
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		g := group{start: i, end: k, n: k - i}
		// Only an id's last group, 17 or 3 digits, takes a check character.
		if (g.n == 17 || g.n == 3) && k < len(s) && s[k]|0x20 == 'x' && (k+1 == len(s) || !isAlnum(s[k+1])) {
			g.x, g.end = true, k+1
		}
		gs = append(gs, g)
		if g.x {
			return gs
		}
		m := sepLen(s, k)
		if m == 0 || k+m >= len(s) || !isDigit(s[k+m]) {
			return gs
		}
		i = k + m
	}
}

// sepLen returns the length of the separator at s[p:]: two spaces, or one
// or two bytes among " -.()", at most one of them a space, dash or dot and
// at most one a parenthesis. It returns 0 if there is none.
func sepLen(s string, p int) int {
	if p+1 < len(s) && s[p] == ' ' && s[p+1] == ' ' {
		return 2
	}
	plain, paren, n := 0, 0, 0
	for ; n < 2 && p+n < len(s); n++ {
		switch s[p+n] {
		case ' ', '-', '.':
			plain++
		case '(', ')':
			paren++
		default:
			return n
		}
		if plain > 1 || paren > 1 {
			return n
		}
	}
	return n
}

// sepBefore returns the separator before group i.
func sepBefore(s string, gs []group, i int) string { return s[gs[i-1].end:gs[i].start] }

// claim marks the spans of gs to mask and reports whether there is any.
// Ids and cards are found first, then phone numbers among the groups left.
func (r Redactor) claim(s string, gs []group, plus bool, budget *int) bool {
	found := false
	mark := func(a, b int, k Kind) {
		for j := a; j < b; j++ {
			gs[j].claim = k
		}
		gs[a].spanEnd = b
		found = true
	}
	total := 0
	for _, g := range gs {
		total += g.n
	}
	if total < minDigits {
		return false
	}
	for i := 0; i < len(gs); {
		if r.Skip&NationalID == 0 {
			if j := matchID(s, gs, i); j > i {
				mark(i, j, NationalID)
				i = j
				continue
			}
		}
		if r.Skip&Card == 0 {
			if j := matchCard(s, gs, i); j > i {
				mark(i, j, Card)
				i = j
				continue
			}
		}
		i++
	}
	if r.Skip&Phone != 0 {
		return found
	}
	for i := 0; i < len(gs); {
		if gs[i].claim != 0 {
			i++
			continue
		}
		// free is the end of the run of unclaimed groups from i.
		free := i
		for free < len(gs) && gs[free].claim == 0 {
			free++
		}
		for i < free {
			first := i == 0 || gs[i-1].claim != 0
			j := matchPhone(s, gs[:free], i, first, plus && i == 0)
			if j == i && first && !plus {
				j = matchNational(s, gs[:free], i, r.regions(), budget)
			}
			if j > i {
				mark(i, j, Phone)
				i = j
				continue
			}
			i++
		}
	}
	return found
}

// digitsOf appends the digits of gs to dst, leaving out X check characters.
func digitsOf(dst []byte, s string, gs []group) []byte {
	for _, g := range gs {
		dst = append(dst, s[g.start:g.start+g.n]...)
	}
	return dst
}

// matchID returns the end of a Chinese resident identity number starting at
// group i, or i: 18 characters together or as 6-8-4, joined by single
// spaces or dashes.
func matchID(s string, gs []group, i int) int {
	j := i + 1
	switch {
	case gs[i].n == 18 && !gs[i].x, gs[i].n == 17 && gs[i].x:
	case i+2 < len(gs) && gs[i].n == 6 && gs[i+1].n == 8 &&
		(gs[i+2].n == 4 && !gs[i+2].x || gs[i+2].n == 3 && gs[i+2].x) &&
		!gs[i].x && !gs[i+1].x && plainSep(sepBefore(s, gs, i+1)) && plainSep(sepBefore(s, gs, i+2)):
		j = i + 3
	default:
		return i
	}
	var d [18]byte
	id := digitsOf(d[:0], s, gs[i:j])
	if gs[j-1].x {
		id = append(id, 'X')
	}
	if !validID(id) {
		return i
	}
	return j
}

// plainSep reports whether sep may join the groups of a card or id number:
// a space, two spaces, a dash or a dot.
func plainSep(sep string) bool { return sep == " " || sep == "  " || sep == "-" || sep == "." }

var (
	idWeights = [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	idCheck   = "10X98765432"
)

// validID checks an 18-character Chinese resident identity number: region,
// birth date and ISO 7064 MOD 11-2 check character.
func validID(id []byte) bool {
	if len(id) != 18 || id[0] == '0' {
		return false
	}
	num := func(a, b int) int {
		n := 0
		for _, c := range id[a:b] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(6, 10), num(10, 12), num(12, 14)
	if year < 1800 || year > 2099 || month < 1 || month > 12 || day < 1 || day > 31 {
		return false
	}
	sum := 0
	for k, w := range idWeights {
		sum += int(id[k]-'0') * w
	}
	return idCheck[sum%11] == id[17]
}

// matchCard returns the end of the longest card number starting at group i,
// or i: one group of 13 to 19 digits, or groups of 3 to 6 digits joined by
// single spaces or dashes and 13 to 19 digits in all, passing the Luhn check.
func matchCard(s string, gs []group, i int) int {
	var d [19]byte
	if g := gs[i]; g.n >= 13 && g.n <= 19 && luhn(digitsOf(d[:0], s, gs[i:i+1])) {
		return i + 1
	}
	// The longest chain of eligible groups from i.
	end, total := i, 0
	for end < len(gs) && gs[end].n >= 3 && gs[end].n <= 6 && total+gs[end].n <= 19 &&
		(end == i || plainSep(sepBefore(s, gs, end)) && !gs[end-1].x) {
		total += gs[end].n
		end++
	}
	for ; end > i+1; end-- {
		n := 0
		for _, g := range gs[i:end] {
			n += g.n
		}
		if n >= 13 && luhn(digitsOf(d[:0], s, gs[i:end])) {
			return end
		}
	}
	return i
}

// luhn reports whether the digits d pass the Luhn check.
func luhn(d []byte) bool {
	sum, double := 0, false
	for k := len(d) - 1; k >= 0; k-- {
		x := int(d[k] - '0')
		if double {
			if x *= 2; x > 9 {
				x -= 9
			}
		}
		sum += x
		double = !double
	}
	return sum%10 == 0
}

// matchPhone returns the end of a phone number starting at group i, or i.
// gs ends where the groups left unclaimed end. first is set when group i
// starts a token or follows a masked span; plus when a "+" precedes it.
func matchPhone(s string, gs []group, i int, first, plus bool) int {
	// greedy takes groups from i while they hold at most 15 digits, and
	// accepts them if they hold at least 7.
	greedy := func(i, skip int) int {
		end, n := i, -skip
		for end < len(gs) && n+gs[end].n <= 15 {
			n += gs[end].n
			end++
		}
		if n < minDigits {
			return i
		}
		return end
	}
	if first {
		if plus || labelled(s, gs[i].start) {
			if j := greedy(i, 0); j > i {
				return j
			}
		}
		if gs[i].n > 2 && s[gs[i].start:gs[i].start+2] == "00" && i+1 < len(gs) {
			if j := greedy(i, 2); j > i+1 {
				return j
			}
		}
	}
	if j := matchCNMobile(s, gs, i); j > i {
		return j
	}
	return matchNANP(s, gs, i)
}

// National numbers written with a trunk prefix: how many digits they
// hold with it.
const minNational, maxNational = 9, 12

// nationalChecks bounds the national-number candidates one Redact call
// validates against libphonenumber's metadata (a few microseconds each,
// per region): past it, text that is little but zero-led groups of digits
// has the rest masked unchecked, so that redaction fails closed and its
// cost stays bounded.
const nationalChecks = 256

// matchNational matches a national phone number of one of regions, written
// with its trunk prefix 0 and in two or more groups (020 7946 0958,
// 03-1234-5678), the longest run of groups from i that libphonenumber
// finds valid for a region; it returns its end, or i. Numbers written
// together, or without the 0, are left alone: order numbers and amounts
// look like them. Each run validated takes one of *budget; with none left,
// the longest run is taken as a number.
func matchNational(s string, gs []group, i int, regions []string, budget *int) int {
	if len(regions) == 0 || s[gs[i].start] != '0' || gs[i].n < 2 || s[gs[i].start+1] == '0' || gs[i].x {
		return i
	}
	if i+2 < len(gs) && gs[i].n == 2 && gs[i+1].n == 2 && gs[i+2].n == 4 {
		return i // a date, 01.06.2025, perhaps with a time after it
	}
	end, n := i, 0
	for end < len(gs) && !gs[end].x && n+gs[end].n <= maxNational {
		n += gs[end].n
		end++
	}
	var d [maxNational]byte
	for ; end >= i+2; end-- {
		digits := digitsOf(d[:0], s, gs[i:end])
		if len(digits) < minNational {
			return i
		}
		if *budget <= 0 {
			return end
		}
		*budget--
		for _, region := range regions {
			if validNational(digits, region) {
				return end
			}
		}
	}
	return i
}

// validNational reports whether digits, a number written with its trunk
// prefix 0, is a valid national number of region.
func validNational(digits []byte, region string) bool {
	info := regionInfoOf(region)
	if info.cc == 0 {
		return false
	}
	num := phonenumbers.PhoneNumber{CountryCode: &info.cc}
	if info.strip {
		digits = digits[1:]
	} else { // the 0 is part of the number, as in Italy
		lead := true
		num.ItalianLeadingZero = &lead
	}
	nn, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return false
	}
	num.NationalNumber = &nn
	return phonenumbers.IsValidNumberForRegion(&num, region)
}

// regionInfo is what validNational needs of a region's metadata: its
// calling code (0 for a region libphonenumber does not know) and whether
// its trunk prefix is 0.
type regionInfo struct {
	cc    int32
	strip bool
}

var regionInfos sync.Map // region code → regionInfo

func regionInfoOf(region string) regionInfo {
	if v, ok := regionInfos.Load(region); ok {
		return v.(regionInfo)
	}
	info := regionInfo{cc: int32(phonenumbers.GetCountryCodeForRegion(region)), strip: phonenumbers.GetNddPrefixForRegion(region, true) == "0"}
	regionInfos.Store(region, info)
	return info
}

// matchCNMobile matches a Chinese mobile number, 1[3-9] and 9 more digits,
// in any grouping, after an optional 86 or 0086 group or prefix.
func matchCNMobile(s string, gs []group, i int) int {
	g := s[gs[i].start : gs[i].start+gs[i].n]
	if (g == "86" || g == "0086") && !gs[i].x && i+1 < len(gs) {
		if j := mobileFrom(s, gs, i+1, 0); j > i+1 {
			return j
		}
	}
	for _, p := range []int{0, 2, 4} {
		if p == 0 || gs[i].n == 11+p && (p == 2 && g[:2] == "86" || p == 4 && g[:4] == "0086") {
			if j := mobileFrom(s, gs, i, p); j > i {
				return j
			}
		}
	}
	return i
}

// mobileFrom reports the end of the groups from i that, after skipping skip
// digits, hold exactly the 11 digits of a Chinese mobile number, or i.
func mobileFrom(s string, gs []group, i, skip int) int {
	var d [15]byte
	n, end := -skip, i
	for end < len(gs) && n < 11 {
		n += gs[end].n
		end++
	}
	if n != 11 || gs[end-1].x {
		return i
	}
	m := digitsOf(d[:0], s, gs[i:end])[skip:]
	if m[0] != '1' || m[1] < '3' {
		return i
	}
	return end
}

// matchNANP matches a North American number written in groups: 3-3-4 with
// an area code starting 2-9, or 1-3-3-4.
func matchNANP(s string, gs []group, i int) int {
	at := func(k, n int) bool { return k < len(gs) && gs[k].n == n && !gs[k].x }
	a := i
	if at(i, 1) && s[gs[i].start] == '1' {
		a = i + 1
	}
	if at(a, 3) && at(a+1, 3) && at(a+2, 4) && s[gs[a].start] >= '2' {
		return a + 3
	}
	return i
}

// labelled reports whether the text before position p ends with a phone
// label: a word such as phone, tel or mobile (alone, with a digit or two,
// or starting a part of a longer name such as phone_number or
// contactPhone), or 电话 or 手机, followed by at most four characters among
// ` :="'.(+` and the full-width colon.
func labelled(s string, p int) bool {
	q, skipped := p, 0
	for q > 0 && skipped < 4 {
		if q >= 3 && s[q-3:q] == "：" {
			q -= 3
		} else if c := s[q-1]; strings.IndexByte(" \t:=\"'.(+", c) >= 0 {
			q--
		} else {
			break
		}
		skipped++
	}
	for _, w := range cjkLabels {
		if strings.HasSuffix(s[:q], w) {
			return true
		}
	}
	// The identifier that ends at q: letters and underscores, and up to two
	// digits at the end (phone2). Never more digits: they could belong to
	// a number that is masked, and the label must read the same after.
	for d := 0; d < 2 && q > 0 && isDigit(s[q-1]); d++ {
		q--
	}
	w := q
	for w > 0 && q-w < 32 && (isAlnum(s[w-1]) && !isDigit(s[w-1]) || s[w-1] == '_') {
		w--
	}
	word := s[w:q]
	for k := 0; k < len(word); k++ {
		// A label word starts the identifier, follows an underscore or
		// starts a capitalised part (contactPhone).
		if k > 0 && word[k-1] != '_' && !(isUpper(word[k]) && !isUpper(word[k-1])) {
			continue
		}
		for _, l := range labels {
			if len(word)-k >= len(l) && strings.EqualFold(word[k:k+len(l)], l) {
				return true
			}
		}
	}
	return false
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

var (
	labels    = []string{"phone", "tel", "mobile", "cell", "fax", "whatsapp"}
	cjkLabels = []string{"电话", "手机", "手机号", "手机号码", "电话号码", "联系方式"}
)

// collect appends the claimed spans of the token gs to spans, with their
// masks.
func (r Redactor) collect(spans []span, s string, gs []group, plus bool) []span {
	for i := 0; i < len(gs); {
		g := gs[i]
		if g.claim == 0 {
			i++
			continue
		}
		start, end := g.start, gs[g.spanEnd-1].end
		var mask string
		switch g.claim {
		case Phone:
			if start > 0 && s[start-1] == '(' {
				start--
			}
			if i == 0 && plus {
				start--
			}
			mask = MaskPhone
		case NationalID:
			mask = MaskID
		case Card:
			mask = MaskCard
			if r.CardLast4 {
				var d [19]byte
				all := digitsOf(d[:0], s, gs[i:g.spanEnd])
				mask = "[card-" + string(all[len(all)-4:]) + "]"
			}
		}
		spans = append(spans, span{start: start, end: end, mask: mask})
		i = g.spanEnd
	}
	return spans
}
