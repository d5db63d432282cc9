package memory

import (
	"testing"

	"github.com/agentguard/agentguard/trace"
)

func TestStepCache(t *testing.T) {
	c := stepCache{max: 2}
	step := func(value string) *trace.Step {
		return CardStep(0, []Constraint{{Kind: KindPreference, Key: "language", Value: value, Status: Active}})
	}
	a, b, d := step("en"), step("zh"), step("fr")
	for _, tt := range []struct {
		name string
		s    *trace.Step
		want string
	}{
		{"first decode", a, "en"},
		{"cached", a, "en"},
		{"second step", b, "zh"},
		{"third step evicts the first", d, "fr"},
		{"evicted step decodes again", a, "en"},
	} {
		cs, err := c.decode(tt.s)
		if err != nil || len(cs) != 1 || cs[0].Value != tt.want {
			t.Errorf("%s: decode = %v, %v; want %s", tt.name, cs, err, tt.want)
		}
		if len(c.m) > c.max || len(c.order) > c.max {
			t.Errorf("%s: cache holds %d steps, %d in order; max %d", tt.name, len(c.m), len(c.order), c.max)
		}
	}
	// A step whose Result changed (against the recorder's contract) is
	// decoded again rather than answered from the cache.
	a.Result = step("de").Result
	if cs, _ := c.decode(a); len(cs) != 1 || cs[0].Value != "de" {
		t.Errorf("after its Result changed, decode = %v; want de", cs)
	}
	bad := &trace.Step{Kind: trace.KindMemory, Name: StepCard, Result: "{"}
	for range 2 {
		if _, err := c.decode(bad); err == nil {
			t.Error("a broken card step decoded without error")
		}
	}
}
