package memory

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// labelledCase is one case of testdata/utterances.txt: the card before an
// utterance, the utterance, and the whole active card after it.
type labelledCase struct {
	line                int
	intent, lang, style string
	before, want        []Constraint
	same                bool
	user                string
}

// readLabelled reads the labelled set; errors name the file and line.
func readLabelled(path string) ([]labelledCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []labelledCase
	var cur *labelledCase
	sc := bufio.NewScanner(f)
	n := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: "+format, append([]any{path, n}, a...)...)
	}
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "case "); ok {
			f := strings.Fields(rest)
			if len(f) != 3 {
				return nil, bad("want \"case INTENT LANG STYLE\", got %q", line)
			}
			out = append(out, labelledCase{line: n, intent: f[0], lang: f[1], style: f[2]})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			return nil, bad("%q before the first case", line)
		}
		field, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, bad("want before:, user: or want:, got %q", line)
		}
		value = strings.TrimSpace(value)
		switch field {
		case "user":
			if cur.user != "" {
				return nil, bad("a second user line")
			}
			cur.user = value
		case "before", "want":
			if field == "want" && (value == "same" || value == "none") {
				cur.same = value == "same"
				cur.want = []Constraint{}
				continue
			}
			c, err := parseLabel(value)
			if err != nil {
				return nil, bad("%v", err)
			}
			if field == "before" {
				cur.before = append(cur.before, c)
			} else {
				cur.want = append(cur.want, c)
			}
		default:
			return nil, bad("unknown field %q", field)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, c := range out {
		if c.user == "" || c.want == nil {
			return nil, fmt.Errorf("%s:%d: case without a user or a want line", path, c.line)
		}
	}
	return out, nil
}

// parseLabel reads "kind/key = value" or "kind/key" (any value: Value "*").
func parseLabel(s string) (Constraint, error) {
	slot, value, hasValue := strings.Cut(s, "=")
	kind, key, ok := strings.Cut(strings.TrimSpace(slot), "/")
	if !ok {
		return Constraint{}, fmt.Errorf("want KIND/KEY [= VALUE], got %q", s)
	}
	c := Constraint{Kind: Kind(kind), Key: key, Value: "*", Status: Active, Source: SourceRule}
	if hasValue {
		c.Value = strings.TrimSpace(value)
	}
	if !c.Kind.Known() {
		return Constraint{}, fmt.Errorf("unknown kind %q", kind)
	}
	return c, nil
}

// labelMatches reports whether an extracted constraint got is the labelled
// one want: same kind; same key, except for ids, whose key holds the id,
// and facts; the same value as the kind compares it.
func labelMatches(want, got Constraint) bool {
	if want.Kind != got.Kind {
		return false
	}
	if want.Kind == KindFact {
		return true
	}
	if want.Kind == KindID && want.Value != "*" {
		return fold(want.Value) == fold(got.Value) // an id is the id, whatever kind the words around it gave
	}
	if want.Key != got.Key && !(want.Kind == KindID && !strings.Contains(want.Key, ":") && strings.HasPrefix(got.Key, want.Key+":")) {
		return false
	}
	if want.Value == "*" {
		return true
	}
	switch want.Kind {
	case KindAddress:
		return foldAddress(want.Value) == foldAddress(got.Value)
	case KindPhone:
		return digitsOf(want.Value) == digitsOf(got.Value)
	case KindTimeRange, KindProhibition:
		return want.Value == got.Value
	}
	return fold(want.Value) == fold(got.Value)
}

func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// tally counts matches for one kind or one group of cases.
type tally struct{ tp, fp, fn int }

func (t tally) precision() float64 {
	if t.tp+t.fp == 0 {
		return 1
	}
	return float64(t.tp) / float64(t.tp+t.fp)
}

func (t tally) recall() float64 {
	if t.tp+t.fn == 0 {
		return 1
	}
	return float64(t.tp) / float64(t.tp+t.fn)
}

// scoreCase compares the card after the case with its label. Constraints
// carried over unchanged from before and rightly kept are not counted, so
// that an extractor earns nothing for doing nothing.
func scoreCase(c labelledCase, got []Constraint) (tp, fp, fn []Constraint) {
	want := c.want
	if c.same {
		want = c.before
	}
	carried := func(x Constraint) bool {
		return slices.ContainsFunc(c.before, func(b Constraint) bool { return labelMatches(b, x) || labelMatches(x, b) })
	}
	used := make([]bool, len(got))
	for _, w := range want {
		i := slices.IndexFunc(got, func(g Constraint) bool { return labelMatches(w, g) })
		for i >= 0 && used[i] {
			j := slices.IndexFunc(got[i+1:], func(g Constraint) bool { return labelMatches(w, g) })
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			fn = append(fn, w)
			continue
		}
		used[i] = true
		if !carried(w) || !carried(got[i]) {
			tp = append(tp, w)
		}
	}
	for i, g := range got {
		if !used[i] {
			fp = append(fp, g)
		}
	}
	return tp, fp, fn
}

// runLabelled observes each case's utterance with ex on a card holding
// its before constraints, and returns the tallies per kind and per
// "lang/style", and the cases that went wrong.
func runLabelled(t testing.TB, cases []labelledCase, ex Extractor) (perKind, perStyle map[string]*tally, wrong []string) {
	perKind, perStyle = map[string]*tally{}, map[string]*tally{}
	get := func(m map[string]*tally, k string) *tally {
		if m[k] == nil {
			m[k] = &tally{}
		}
		return m[k]
	}
	for _, c := range cases {
		card := cardBefore(t, c)
		card.Observe(context.Background(), ex, 1, c.user)
		tp, fp, fn := scoreCase(c, card.Active())
		for _, x := range tp {
			get(perKind, string(x.Kind)).tp++
		}
		for _, x := range fp {
			get(perKind, string(x.Kind)).fp++
		}
		for _, x := range fn {
			get(perKind, string(x.Kind)).fn++
		}
		st := get(perStyle, c.lang+"/"+c.style)
		st.tp, st.fp, st.fn = st.tp+len(tp), st.fp+len(fp), st.fn+len(fn)
		if len(fp)+len(fn) > 0 {
			wrong = append(wrong, fmt.Sprintf("line %d %s: %q\n\tmissed %v\n\textra  %v", c.line, c.intent, c.user, short(fn), short(fp)))
		}
	}
	return perKind, perStyle, wrong
}

var showWrong = flag.Bool("labelled.v", false, "TestLabelledSet: list the cases the extractor gets wrong")

// labelledFloors are the lowest precision and recall TestLabelledSet
// accepts per kind: the figures measured when the extractor was last
// changed, rounded down, so that a change that loses ground fails.
//
// Measured on the set's 160 utterances: every kind at 1.00 and 1.00 with
// the extractor that reads values first (before it: address 0.37 and
// 0.26, prohibition 0.76 and 0.71, preference 0.40 and 0.22). The floors
// are issue 15's targets, 0.95 and 0.90, since the extractor was written
// knowing this set: see TestCorpusUtterances for wording it was not.
var labelledFloors = map[Kind][2]float64{
	KindProhibition: {0.95, 0.90},
	KindAddress:     {0.95, 0.90},
	KindTimeRange:   {0.95, 0.90},
	KindPhone:       {0.95, 0.90},
	KindEmail:       {0.95, 0.90},
	KindID:          {0.95, 0.90},
	KindPreference:  {0.95, 0.90},
}

// TestLabelledSet scores RuleBased on testdata/utterances.txt, wordings
// the rules were not written around, and prints precision and recall per
// kind and per language and style. Run with -v to see the table and
// -labelled.v to list the misses.
func TestLabelledSet(t *testing.T) {
	perKind := scoreFile(t, "testdata/utterances.txt")
	for k, floor := range labelledFloors {
		x := perKind[string(k)]
		if x == nil {
			t.Errorf("%s: no labelled constraint", k)
			continue
		}
		if p := x.precision(); p < floor[0] {
			t.Errorf("%s: precision %.2f, below the floor %.2f", k, p, floor[0])
		}
		if r := x.recall(); r < floor[1] {
			t.Errorf("%s: recall %.2f, below the floor %.2f", k, r, floor[1])
		}
	}
}

// TestCorpusUtterances scores RuleBased on testdata/corpus_utterances.txt,
// user turns of public trajectories labelled after the extractor was
// written: the figures on wording it was not tuned to. It sets no floor.
func TestCorpusUtterances(t *testing.T) {
	scoreFile(t, "testdata/corpus_utterances.txt")
}

// scoreFile runs RuleBased over a labelled file, logs its figures per kind
// and per language and style, and returns the tallies per kind.
func scoreFile(t *testing.T, path string) map[string]*tally {
	cases, err := readLabelled(path)
	if err != nil {
		t.Fatal(err)
	}
	perKind, perStyle, wrong := runLabelled(t, cases, RuleBased(nil))
	var all tally
	t.Logf("%s: %d utterances; per kind:", path, len(cases))
	t.Logf("%-12s %4s %4s %4s %9s %6s", "kind", "tp", "fp", "fn", "precision", "recall")
	for _, k := range kinds {
		x, ok := perKind[string(k)]
		if !ok {
			continue
		}
		if k == KindFact {
			t.Logf("%-12s %4d %4s %4d %9s %6s (pinned word for word; left out of all)", k, x.tp, "-", x.fn, "-", "-")
			continue
		}
		all.tp, all.fp, all.fn = all.tp+x.tp, all.fp+x.fp, all.fn+x.fn
		t.Logf("%-12s %4d %4d %4d %9.2f %6.2f", k, x.tp, x.fp, x.fn, x.precision(), x.recall())
	}
	t.Logf("%-12s %4d %4d %4d %9.2f %6.2f", "all", all.tp, all.fp, all.fn, all.precision(), all.recall())
	t.Logf("per language/style:")
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range perStyle {
			if !yield(k) {
				return
			}
		}
	}) {
		x := perStyle[k]
		t.Logf("%-12s %4d %4d %4d %9.2f %6.2f", k, x.tp, x.fp, x.fn, x.precision(), x.recall())
	}
	if *showWrong {
		for _, w := range wrong {
			t.Log(w)
		}
	}
	return perKind
}

// TestCardExtractReadsTheCardAsAList pins the card's fast path: the rules
// read the card by kind and key (Card.Extract), and must find what they
// find given the card as a list (Extract with Active), on every labelled
// utterance with its card before it.
func TestCardExtractReadsTheCardAsAList(t *testing.T) {
	var all []labelledCase
	for _, path := range []string{"testdata/utterances.txt", "testdata/corpus_utterances.txt"} {
		cases, err := readLabelled(path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cases...)
	}
	for _, c := range all {
		card := cardBefore(t, c)
		fast, err1 := card.Extract(context.Background(), RuleBased(nil), 1, c.user)
		list, err2 := Extract(context.Background(), RuleBased(nil), 1, c.user, card.Active())
		if !reflect.DeepEqual(fast, list) || (err1 == nil) != (err2 == nil) {
			t.Errorf("line %d %q:\n card: %+v (%v)\n list: %+v (%v)", c.line, c.user, fast, err1, list, err2)
		}
	}
	if len(all) < 200 {
		t.Fatalf("%d labelled cases: the sets were not read", len(all))
	}
}

// cardBefore returns the card a labelled case states before its utterance.
func cardBefore(t testing.TB, c labelledCase) *Card {
	t.Helper()
	card := &Card{}
	for _, b := range c.before {
		b.Value = strings.TrimSuffix(b.Value, "*")
		if b.Value == "" {
			b.Value = "(before)"
		}
		if err := card.Apply(b); err != nil {
			t.Fatalf("line %d: %v", c.line, err)
		}
	}
	return card
}
