package detect

import (
	"fmt"
	"slices"
	"testing"
)

// FuzzIsWriteVerb keeps the allocation-free isWriteVerb in agreement with
// verbOf and the verb list.
func FuzzIsWriteVerb(f *testing.F) {
	for _, n := range []string{"send_email", "sendEmail", "SEND-email", "query_order", "getOrder", "update", "Ünlock_x", "cancel.reservation", "x", "", "averyveryverylongverbname_x"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := slices.Contains(writeVerbs, VerbOf(name))
		if got := IsWriteVerb(name); got != want {
			t.Errorf("IsWriteVerb(%q) = %v, VerbOf says %v (%q)", name, got, want, VerbOf(name))
		}
	})
}

func ExampleClauseRefs() {
	answer := "Per clause 7.3 and 第5条, you get a refund [KB-REF-01]. There are no records of a fee."
	for _, ref := range ClauseRefs(answer) {
		fmt.Println(ref.Number, ref.Text)
	}
	fmt.Println(CitedIDs(answer), AssertsAbsence(answer))
	// Output:
	// 7.3 clause 7.3
	// 5 第5条
	// [KB-REF-01] true
}
