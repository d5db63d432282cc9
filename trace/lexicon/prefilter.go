package lexicon

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A prefilter is a set of words one of which every match of a pattern
// contains, some of them only beside an ASCII digit (a clock's ":" after
// one). The lexicon's patterns have no literal prefix the regexp
// engine could seek to (case-folded alternatives after \b), so the engine
// tries every position of every text; most texts hold none of the words,
// and a substring search turns them away first. Like RE2's and
// Hyperscan's literal prefilters, it is derived from the pattern itself,
// so a lexicon keeps its patterns as data and nothing here names a word.
type prefilter struct {
	words []string // lower-cased when the pattern folds case
	// set finds the words in one pass: all of them, or, when the pattern
	// folds case, those whose only cased letters are ASCII
	// (asciiCaseOnly); foldWords are the others, looked for rune by rune.
	set       *WordSet
	foldWords []string
	fold      bool
	digit     bool // an ASCII digit is one of them ([0-9], \d)
	// nextToDigit are words that count only beside an ASCII digit: ":"
	// after one for a clock's "10:30", "-" after one for "2025-06-01".
	nextToDigit []digitWord
}

// digitWord is a word that counts only with an ASCII digit right before
// it (before) or right after it.
type digitWord struct {
	word   string
	before bool
}

// digitMark stands, inside a word exact derives, for any ASCII digit. A
// pattern's literal that holds it is not derived from (exact).
const digitMark = '\x01'

// anyDigit stands for an ASCII digit among a pattern's required words: a
// word no text holds, so the substring searches pass it by.
const anyDigit = "\x00digit"

// indexPrefilters derives the prefilter of each of c's patterns, once, at
// compile time: MayMatch then reads a map that never changes.
func (c *Compiled) indexPrefilters() {
	res := []*regexp.Regexp{c.Absence, c.Denial, c.ClauseRefs, c.InstructionMarkers, c.Affirmation, c.GoAhead, c.Time.RangeJoin,
		c.Keys.Identifying, c.Keys.Content, c.Keys.Date, c.Keys.Amount, c.Keys.Destination, c.Keys.Target}
	res = append(res, c.Time.Dates...)
	res = append(res, c.Time.DateRanges...)
	res = append(res, c.Time.Clocks...)
	for _, b := range c.Time.Bounds {
		res = append(res, b.Before, b.After)
	}
	c.prefilters = make(map[*regexp.Regexp]*prefilter, len(res))
	for _, re := range res {
		if re != nil {
			c.prefilters[re] = prefilterOf(re)
		}
	}
	c.Time.prefilters = c.prefilters
}

// MayMatch reports whether re, one of c's patterns, could match text:
// false only when text holds none of the words every match of re contains
// (and no ASCII digit, when a digit is among what every match contains).
// It costs a substring search; use it before a pattern that runs on every
// step or every sentence. For a pattern that is not c's it is true.
func (c *Compiled) MayMatch(re *regexp.Regexp, text string) bool { return c.prefilters[re].may(text) }

// MayMatch is Compiled.MayMatch for the time patterns.
func (t *TimePatterns) MayMatch(re *regexp.Regexp, text string) bool {
	return t.prefilters[re].may(text)
}

// may reports whether text holds one of pf's words; a nil pf turns no
// text away.
func (pf *prefilter) may(text string) bool {
	if pf == nil || pf.digit && strings.ContainsAny(text, "0123456789") {
		return true
	}
	if pf.set.In(text) || slices.ContainsFunc(pf.foldWords, func(w string) bool { return containsFold(text, w) }) {
		return true
	}
	return pf.besideDigit(text, pf.fold)
}

// besideDigit reports whether text holds one of pf.nextToDigit beside an
// ASCII digit on the side it needs one, ignoring ASCII case when fold is
// set (the words beside digits have ASCII case only).
func (pf *prefilter) besideDigit(text string, fold bool) bool {
	for _, dw := range pf.nextToDigit {
		w := dw.word
		for at := 0; at+len(w) <= len(text); at++ {
			if !hasPrefixASCII(text[at:], w, fold) {
				continue
			}
			if dw.before && at > 0 && isDigit(text[at-1]) ||
				!dw.before && at+len(w) < len(text) && isDigit(text[at+len(w)]) {
				return true
			}
		}
	}
	return false
}

// hasPrefixASCII reports whether s starts with w, ignoring ASCII case
// when fold is set; w is in lower case then.
func hasPrefixASCII(s, w string, fold bool) bool {
	if !fold {
		return strings.HasPrefix(s, w)
	}
	for i := 0; i < len(w); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitCore is what a word exact derived with digit marks is looked for
// by: its first run of literal bytes with the digit next to it, before
// it when there is one ("10:30" is looked for as ":" after a digit);
// ok is false when the word is digits alone.
func digitCore(w string) (dw digitWord, ok bool) {
	start := strings.IndexFunc(w, func(r rune) bool { return r != digitMark })
	if start < 0 {
		return digitWord{}, false
	}
	end := start + strings.IndexByte(w[start:]+string(rune(digitMark)), digitMark)
	if start > 0 {
		return digitWord{word: w[start:end], before: true}, true
	}
	if end == len(w) {
		return digitWord{}, false // no digit mark after all
	}
	return digitWord{word: w[start:end]}, true
}

// lowerASCII appends text to dst with its ASCII letters lowered.
func lowerASCII(dst []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// asciiCaseOnly reports whether the only letters of w with an upper case
// are ASCII, so that lowering a text's ASCII letters is enough to find it.
func asciiCaseOnly(w string) bool {
	for _, r := range w {
		if r >= utf8.RuneSelf && unicode.ToUpper(r) != r {
			return false
		}
	}
	return true
}

// prefilterOf derives re's prefilter, or nil when re has no set of
// required words worth searching for (any word shorter than two bytes, or
// more than maxPrefilterWords of them).
func prefilterOf(re *regexp.Regexp) *prefilter {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	words, fold, ok := required(parsed.Simplify())
	if !ok || len(words) == 0 || len(words) > maxPrefilterWords {
		return nil
	}
	p := &prefilter{fold: fold}
	for _, w := range words {
		switch {
		case w == anyDigit:
			p.digit = true
		case strings.IndexByte(w, digitMark) >= 0:
			dw, ok := digitCore(w)
			switch {
			case !ok || fold && !asciiCaseOnly(dw.word):
				p.digit = true // every text that holds w holds a digit
			case !slices.Contains(p.nextToDigit, dw):
				p.nextToDigit = append(p.nextToDigit, dw)
			}
		case len(w) < 2:
			return nil
		case !slices.ContainsFunc(words, func(v string) bool {
			return v != w && v != anyDigit && strings.IndexByte(v, digitMark) < 0 && strings.Contains(w, v)
		}) &&
			!slices.Contains(p.words, w):
			// A word that holds another ("january", "jan") adds nothing.
			p.words = append(p.words, w)
		}
	}
	var inSet []string
	for _, w := range p.words {
		if fold && !asciiCaseOnly(w) {
			p.foldWords = append(p.foldWords, w)
		} else {
			inSet = append(inSet, w)
		}
	}
	p.set = NewWordSet(inSet, fold)
	return p
}

// maxWords bounds the words a part of a pattern expands to (a
// concatenation's cross product, a repeat), and maxPrefilterWords those
// of a prefilter, which a WordSet looks for in one pass: InstructionMarkers'
// alternatives hold 165.
const (
	maxWords          = 64
	maxPrefilterWords = 512
)

// digits reports whether re is a class of ASCII digits only.
func digits(re *syntax.Regexp) bool {
	if re.Op != syntax.OpCharClass || len(re.Rune) == 0 {
		return false
	}
	for i := 0; i+1 < len(re.Rune); i += 2 {
		if re.Rune[i] < '0' || re.Rune[i+1] > '9' {
			return false
		}
	}
	return true
}

// exact returns the strings re matches, when they are few and literal.
func exact(re *syntax.Regexp) (words []string, fold, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, false, true
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if strings.IndexByte(s, digitMark) >= 0 {
			return nil, false, false
		}
		if fold {
			s = strings.ToLower(s)
		}
		return []string{s}, fold, true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
		}
		if n > 4 {
			if digits(re) {
				return []string{string(rune(digitMark))}, false, true // some digit: [0-9], \d
			}
			return nil, false, false
		}
		// A small class is its letters; [Cc] is a folded c.
		seen := map[string]bool{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if l := string(unicode.ToLower(r)); !seen[l] {
					seen[l] = true
					words = append(words, l)
				}
			}
		}
		return words, len(words) < n, true
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		w, f, ok := exact(re.Sub[0])
		if !ok || len(w) >= maxWords {
			return nil, false, false
		}
		return append([]string{""}, w...), f, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			w, f, ok := exact(sub)
			if !ok {
				return nil, false, false
			}
			words, fold = append(words, w...), fold || f
		}
		return words, fold, len(words) <= maxWords
	case syntax.OpConcat:
		words = []string{""}
		for _, sub := range re.Sub {
			w, f, ok := exact(sub)
			if !ok || len(words)*len(w) > maxWords {
				return nil, false, false
			}
			words, fold = cross(words, w), fold || f
		}
		return words, fold, true
	}
	return nil, false, false
}

// required returns words one of which every match of re contains.
func required(re *syntax.Regexp) (words []string, fold, ok bool) {
	if w, f, ok := exact(re); ok && !hasEmpty(w) {
		return w, f, true
	}
	switch re.Op {
	case syntax.OpCharClass:
		if digits(re) {
			return []string{anyDigit}, false, true
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			w, f, ok := required(sub)
			if !ok {
				return nil, false, false
			}
			words, fold = append(words, w...), fold || f
		}
		return words, fold, true
	case syntax.OpConcat:
		// The best of: each run of exact factors, crossed; each other
		// factor's own required words. Best is the set whose shortest
		// word is longest.
		best, bestFold, found := []string(nil), false, false
		consider := func(w []string, f bool) {
			if len(w) == 0 || len(w) > maxWords || hasEmpty(w) {
				return
			}
			if !found || shortest(w) > shortest(best) {
				best, bestFold, found = w, f, true
			}
		}
		run, runFold := []string{""}, false
		for _, sub := range re.Sub {
			if w, f, ok := exact(sub); ok && len(run)*len(w) <= maxWords {
				run, runFold = cross(run, w), runFold || f
				continue
			}
			consider(run, runFold)
			run, runFold = []string{""}, false
			if w, f, ok := required(sub); ok {
				consider(w, f)
			}
		}
		consider(run, runFold)
		return best, bestFold, found
	}
	return nil, false, false
}

func cross(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

// shortest returns the length of the shortest of w, a digit counted as
// one byte: the longer a set's shortest word, the fewer texts hold one.
func shortest(w []string) int {
	n := -1
	for _, s := range w {
		l := len(s)
		switch {
		case s == anyDigit:
			l = 1
		case strings.IndexByte(s, digitMark) >= 0:
			l = 1 // digits alone: a digit
			if dw, ok := digitCore(s); ok {
				l = len(dw.word) + 1
			}
		}
		if n < 0 || l < n {
			n = l
		}
	}
	return n
}

func hasEmpty(w []string) bool {
	for _, s := range w {
		if s == "" {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case word w, ignoring
// the case of s.
func containsFold(s, w string) bool {
	if w == "" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(w)
	upper := unicode.ToUpper(first)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == first || r == upper || unicode.ToLower(r) == first) && hasPrefixFold(s[i:], w) {
			return true
		}
		i += n
	}
	return false
}

// hasPrefixFold reports whether s starts with w, ignoring case.
func hasPrefixFold(s, w string) bool {
	for _, wr := range w {
		if s == "" {
			return false
		}
		r, n := utf8.DecodeRuneInString(s)
		if r != wr && unicode.ToLower(r) != wr {
			return false
		}
		s = s[n:]
	}
	return true
}
