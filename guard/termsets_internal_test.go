package guard

import (
	"slices"
	"testing"
)

// unshaped is x with a length filter that lets every word through.
func unshaped(x *termIndex) *termIndex {
	y := *x
	for i := range y.shapes {
		y.shapes[i] = ^uint64(0)
	}
	return &y
}

// termMatches lists what x.each finds in s.
func termMatches(x *termIndex, s string) [][3]int {
	var out [][3]int
	x.each(s, func(k, i, j int) bool { out = append(out, [3]int{k, i, j}); return true })
	return out
}

// checkClauseWords compares clauseWords with one termIndex per list.
func checkClauseWords(t *testing.T, cl string) {
	t.Helper()
	v := &claimVocabulary
	lists := [][]lexTerm{
		setNeg: compileTerms(v.Negation), setHedge: compileTerms(v.Hedge), setAside: compileTerms(v.Aside),
		setCondition: compileTerms(v.Condition), setPerson: compileTerms(v.Person), setDone: compileTerms(v.Done),
		setSent: compileTerms(v.Sent), setBare: compileTerms(v.Bare), setWeak: compileTerms(v.Weak),
	}
	for _, ch := range v.Channels {
		lists = append(lists, compileTerms(ch.Done))
	}
	for _, x := range []*termIndex{claimIndex, clauseWords.ix} {
		if got, want := termMatches(x, cl), termMatches(unshaped(x), cl); !slices.Equal(got, want) {
			t.Errorf("%q: matches %v, without the length filter %v", cl, got, want)
		}
	}
	got := clauseWords.in(cl)
	for l, terms := range lists {
		want := false
		newTermIndex(terms).each(cl, func(int, int, int) bool { want = true; return false })
		if has := got&(1<<l) != 0; has != want {
			t.Errorf("%q: list %d: in = %v, its own index = %v", cl, l, has, want)
		}
	}
}

func TestClauseWords(t *testing.T) {
	var all []string
	for _, terms := range [][]lexTerm{compileTerms(claimVocabulary.Negation), compileTerms(claimVocabulary.Done), compileTerms(claimVocabulary.Hedge), compileTerms(claimVocabulary.Sent)} {
		for _, term := range terms {
			all = append(all, term.text)
		}
	}
	for _, term := range claimTerms {
		all = append(all, term.text)
	}
	for i, w := range all {
		for _, cl := range []string{w, w + "s", "x" + w, w + "'s", "i " + w + " " + all[(i+3)%len(all)]} {
			checkClauseWords(t, cl)
		}
	}
	for _, s := range []string{"", "i've sent the text", "i couldn't send the e-mail, sorry", "退款已原路退回", "短信发过去了吗", "if you want, i can text you", "your money's on its way"} {
		checkClauseWords(t, normaliseAnswer(s))
	}
}

func FuzzClauseWords(f *testing.F) {
	for _, s := range []string{"i've texted you", "we've refunded it but it bounced", "已发送短信"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkClauseWords(t, normaliseAnswer(s)) })
}
