package lexicon

import (
	"slices"
	"strings"
)

// Recommendations is how an answer recommends a place, a product or a
// company by its name: the untrusted-relay rule reads the names an answer
// recommends and judges where each came from, as it judges the links an
// answer passes on. The words only find what the answer recommends; whether
// that is a finding depends on where the name came from.
//
// Words are matched in lower case; a word whose first or last character is
// an ASCII letter or digit must start or end at a word boundary there.
type Recommendations struct {
	// Before are words shortly before a name that recommend it: "recommend",
	// "you should visit", "stay at", "推荐", "建议". A few words (or
	// characters) may stand between them and the name: "I recommend the
	// Harbour Inn", "推荐您入住海景酒店".
	Before []string
	// After are words right after a name that recommend it: "is worth a
	// visit", "值得一去".
	After []string
	// Joiners are lower-case words that may stand inside a name written in
	// capitals: "Hotel de la Paix", "Bank of Springfield".
	Joiners []string
	// Articles are words a name written in capitals may start with that are
	// no part of it: "The Harbour Inn" is the Harbour Inn.
	Articles []string
	// Kinds are the words that end a name in a script without capitals:
	// "酒店", "餐厅", "公司". A run of such a script that ends in one is a
	// name.
	Kinds []string
}

func mergeRecommendations(a, b Recommendations) Recommendations {
	return Recommendations{
		Before:   union(a.Before, b.Before),
		After:    union(a.After, b.After),
		Joiners:  union(a.Joiners, b.Joiners),
		Articles: union(a.Articles, b.Articles),
		Kinds:    union(a.Kinds, b.Kinds),
	}
}

// buildRecommendations returns a copy of r with every word in lower case
// and each list sorted longest first, so that a reader trying the words in
// order finds the longest that matches at a place.
func buildRecommendations(r *Recommendations) Recommendations {
	words := func(ws []string) []string {
		out := make([]string, 0, len(ws))
		for _, w := range ws {
			if w = strings.ToLower(strings.TrimSpace(w)); w != "" && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
		slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
		return out
	}
	return Recommendations{Before: words(r.Before), After: words(r.After), Joiners: words(r.Joiners), Articles: words(r.Articles), Kinds: words(r.Kinds)}
}
