package claims

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
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
	lc := &detect.Default().Claims
	v := vocabOf(detect.Default())
	lists := [][]lexTerm{
		setNeg: compileTerms(lc.Negation), setHedge: compileTerms(lc.Hedge), setAside: compileTerms(lc.Aside),
		setCondition: compileTerms(lc.Condition), setPerson: compileTerms(lc.Person), setDone: compileTerms(lc.Done),
		setSent: compileTerms(lc.Sent), setBare: compileTerms(lc.Bare), setWeak: compileTerms(lc.Weak),
		setReported: compileTerms(lc.Reported), setInstruction: compileTerms(lc.Instruction), setFuture: compileTerms(lc.Future),
	}
	for _, ch := range lc.Channels {
		lists = append(lists, compileTerms(ch.Done))
	}
	for _, x := range []*termIndex{v.index, v.sets.ix} {
		if got, want := termMatches(x, cl), termMatches(unshaped(x), cl); !slices.Equal(got, want) {
			t.Errorf("%q: matches %v, without the length filter %v", cl, got, want)
		}
	}
	got := v.sets.in(cl)
	for l, terms := range lists {
		want := false
		newTermIndex(terms).each(cl, func(int, int, int) bool { want = true; return false })
		if has := got&(1<<l) != 0; has != want {
			t.Errorf("%q: list %d: in = %v, its own index = %v", cl, l, has, want)
		}
	}
}

func TestClauseWords(t *testing.T) {
	lc := &detect.Default().Claims
	var all []string
	for _, terms := range [][]lexTerm{compileTerms(lc.Negation), compileTerms(lc.Done), compileTerms(lc.Hedge), compileTerms(lc.Sent)} {
		for _, term := range terms {
			all = append(all, term.text)
		}
	}
	for _, term := range vocabOf(detect.Default()).terms {
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
