package detect

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/trace/lexicon"
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
