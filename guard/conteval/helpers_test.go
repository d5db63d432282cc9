package conteval

import (
	"fmt"

	"github.com/agentguard/agentguard/trace"
)

// tr builds a trace with the given id, route and steps, numbering the steps.
func tr(id, route string, steps ...*trace.Step) *trace.Trace {
	t := &trace.Trace{ID: id, Route: route, UserTurns: []string{"hello"}}
	for i, s := range steps {
		s.Index = i
		t.Steps = append(t.Steps, s)
	}
	return t
}

// costly returns a trace of route whose one model step costs cost.
func costly(id, route string, cost float64) *trace.Trace {
	return tr(id, route, &trace.Step{Kind: trace.KindModel, Result: "ok", Cost: cost})
}

// many returns n normal traces of route, ids prefix-0 ..., costing 1 each.
func many(prefix, route string, n int) []*trace.Trace {
	out := make([]*trace.Trace, n)
	for i := range out {
		out[i] = costly(fmt.Sprintf("%s-%05d", prefix, i), route, 1)
	}
	return out
}

func ids(sel *Selection, b Band) map[string]bool {
	out := map[string]bool{}
	for _, s := range sel.Samples {
		if s.Bands.Has(b) {
			out[s.Trace.ID] = true
		}
	}
	return out
}
