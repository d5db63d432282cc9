package detect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
)

// FuzzIsWriteVerb keeps the allocation-free IsWriteVerb in agreement with
// VerbOf and the lexicon's verb list.
func FuzzIsWriteVerb(f *testing.F) {
	for _, n := range []string{"send_email", "sendEmail", "SEND-email", "query_order", "getOrder", "update", "Ünlock_x", "cancel.reservation", "x", "", "averyveryverylongverbname_x"} {
		f.Add(n)
	}
	verbs := lexicon.Default().WriteVerbs
	f.Fuzz(func(t *testing.T, name string) {
		want := slices.Contains(verbs, VerbOf(name))
		if got := IsWriteVerb(Default(), name); got != want {
			t.Errorf("IsWriteVerb(%q) = %v, VerbOf says %v (%q)", name, got, want, VerbOf(name))
		}
	})
}

func ExampleClauseRefs() {
	answer := "Per clause 7.3 and 第5条, you get a refund [KB-REF-01]. There are no records of a fee."
	for _, ref := range ClauseRefs(Default(), answer) {
		fmt.Println(ref.Number, ref.Text)
	}
	fmt.Println(CitedIDs(answer), AssertsAbsence(Default(), answer))
	// Output:
	// 7.3 clause 7.3
	// 5 第5条
	// [KB-REF-01] true
}

func TestIsWriteVerbAllocs(t *testing.T) {
	w := Default()
	if n := testing.AllocsPerRun(100, func() { IsWriteVerb(w, "sendEmail") }); n != 0 {
		t.Errorf("IsWriteVerb allocates %v times", n)
	}
}

// clauseRefsEverywhere is ClauseRefs without the windows: the patterns run
// over the whole text. The windowed search must find the same references.
func clauseRefsEverywhere(text string) []ClauseRef {
	w := Default()
	text = textnorm.Clauses(text)
	var out []ClauseRef
	for _, m := range w.ClauseRefs.FindAllStringSubmatch(text, -1) {
		out = append(out, ClauseRef{Number: lexicon.Group(w.ClauseRefs, m, "num"), Text: strings.TrimSpace(m[0])})
	}
	return out
}

var clauseTexts = []string{
	"",
	"Per section 9.9 and clause 3.1, refunds take 7 days.",
	"Your order A1001 costs $42.50; see Policy 12.",
	"根据第七条和第 12 条，退款需要 7 天。",
	"subclause 7 is not a clause; section 1.2.3.4.5.6.7.8.9.10.11.12 is long",
	"rule 1 rule 2 rule 3 rule 4 rule 5 rule 6 rule 7 rule 8",
	"§7, § 8.1, Article VII, Sec. 7.3 and paragraph no. 4",
	strings.Repeat("x", 100) + " clause " + strings.Repeat("1", 80) + " " + strings.Repeat("y", 60) + " section 2",
	"The section on returns (" + strings.Repeat("long words ", 10) + ") says 30 days.",
}

func TestClauseRefsWindowsFindWhatTheWholeTextHolds(t *testing.T) {
	for _, text := range clauseTexts {
		got, want := ClauseRefs(Default(), text), clauseRefsEverywhere(text)
		if !slices.Equal(got, want) {
			t.Errorf("ClauseRefs(%q)\n got %v\nwant %v", text, got, want)
		}
	}
}

func FuzzClauseRefs(f *testing.F) {
	for _, text := range clauseTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := ClauseRefs(Default(), text), clauseRefsEverywhere(text)
		if !slices.Equal(got, want) {
			t.Errorf("ClauseRefs(%q)\n got %v\nwant %v", text, got, want)
		}
	})
}

// isEmptyResultDecoded is IsEmptyResult decoding the whole text, as it did
// before it learned to stop at the first record.
func isEmptyResultDecoded(result string) bool {
	s := strings.TrimSpace(result)
	if s == "" {
		return true
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return emptyJSON(v, 0)
	}
	return Default().EmptyResults[strings.ToLower(strings.TrimRight(s, ".!。！ "))]
}

var resultTexts = []string{
	"", "  ", "[]", "{}", "null", `""`, `{"orders":[]}`, `{"orders":[],"total":null}`, `{"a":{}}`,
	`{"orders":[{"id":"A1"}]}`, `[{"id":1}]`, `{"status":""}`, `{"a":null,"b":[],"c":{}}`,
	`{"a":[], "b": 0}`, `{"a":[] "b"}`, `{"a":`, `[`, "No results.", "没有找到相关记录。", "not found",
	`{"a":{"b":[]}}`, `{"a":[],}`, `{"a":[]} trailing`,
}

func TestIsEmptyResultStopsEarlyAndAgrees(t *testing.T) {
	for _, r := range resultTexts {
		if got, want := IsEmptyResult(Default(), r), isEmptyResultDecoded(r); got != want {
			t.Errorf("IsEmptyResult(%q) = %v, want %v", r, got, want)
		}
	}
}

func FuzzIsEmptyResult(f *testing.F) {
	for _, r := range resultTexts {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, r string) {
		if got, want := IsEmptyResult(Default(), r), isEmptyResultDecoded(r); got != want {
			t.Errorf("IsEmptyResult(%q) = %v, want %v", r, got, want)
		}
	})
}

// A result with records is known non-empty at its first value, at no
// allocation: the gate reads every tool result.
func TestIsEmptyResultOfARecordAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("under the race detector sync.Pool drops what it is given at random: the pooled decoder is made again")
	}
	w := Default()
	for _, r := range []string{`{"order_id":"A1","email":"c@example.com"}`, `{"orders":[{"id":"A1"}]}`, `{"结果":null,"订单":["A1"]}`} {
		if n := testing.AllocsPerRun(100, func() { IsEmptyResult(w, r) }); n != 0 {
			t.Errorf("IsEmptyResult(%s): %v allocations, want 0", r, n)
		}
	}
}
