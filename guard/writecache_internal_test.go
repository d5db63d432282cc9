package guard

import (
	"fmt"
	"testing"
)

// A writeCache answers as stateChanging does, for names it keeps and,
// past its bound, for names it judges afresh.
func TestWriteCacheAgreesWithStateChanging(t *testing.T) {
	tools := ToolPolicies{"get_order": {Effect: EffectWrite}, "cancel_order": {Effect: EffectRead}}
	c := newWriteCache(tools)
	names := []string{"get_order", "cancel_order", "send_email", "query_order", "updateAddress", "退款", ""}
	for i := range maxWriteCache + 10 { // past the bound
		names = append(names, fmt.Sprintf("tool_%d", i), fmt.Sprintf("delete_%d", i))
	}
	for range 2 { // the second time from the cache
		for _, name := range names {
			if got, want := c.writes(name), stateChanging(name, tools[name]); got != want {
				t.Errorf("writes(%q) = %v, want %v", name, got, want)
			}
		}
	}
	if n := len(*c.m.Load()); n > maxWriteCache {
		t.Errorf("the cache keeps %d names, more than %d", n, maxWriteCache)
	}
}
