package rulekit

import (
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
)

// Tools answers for the names it keeps as it does for a name it judges
// afresh past its bound, and keeps no more than the bound.
func TestToolsCacheAgreesWithTheLexicon(t *testing.T) {
	w := detect.Default()
	ts := NewTools(w, map[string]Tool{"get_order": {Writes: true}, "cancel_order": {Writes: false}})
	names := []string{"send_email", "query_order", "updateAddress", "退款", ""}
	for i := range maxGuessed + 10 { // past the bound
		names = append(names, fmt.Sprintf("tool_%d", i), fmt.Sprintf("delete_%d", i))
	}
	for range 2 { // the second time from the cache
		for _, name := range names {
			if got, want := ts.Writes(name), detect.IsWriteVerb(w, name); got != want {
				t.Errorf("Writes(%q) = %v, want %v", name, got, want)
			}
		}
		if !ts.Writes("get_order") || ts.Writes("cancel_order") {
			t.Error("a listed tool's effect is not what its policy says")
		}
	}
	if n := len(*ts.guessed.Load()); n > maxGuessed {
		t.Errorf("the cache keeps %d names, more than %d", n, maxGuessed)
	}
}
