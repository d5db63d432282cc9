package trace

import (
	"encoding/json"
	"strconv"
)

// Helpers for rules written as code: find earlier steps by tool, argument or
// entity, and read their arguments and results.

// ToolSteps returns the tool steps of t, in order, that called one of names
// (any tool when names is empty), leaving out calls that were blocked.
func (t *Trace) ToolSteps(names ...string) []*Step {
	var out []*Step
	for _, s := range t.Steps {
		if s.Kind != KindTool || s.Blocked {
			continue
		}
		if len(names) == 0 {
			out = append(out, s)
			continue
		}
		for _, n := range names {
			if s.Name == n {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// FindCalls returns the executed calls of tool whose argument key has value
// (compared as text: "3" matches 3): the earlier steps about one entity.
func (t *Trace) FindCalls(tool, key, value string) []*Step {
	var out []*Step
	for _, s := range t.ToolSteps(tool) {
		if s.ArgString(key) == value {
			out = append(out, s)
		}
	}
	return out
}

// Arg returns the top-level argument key of a step whose Args is a JSON object.
func (s *Step) Arg(key string) (any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(s.Args), &m) != nil {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}

// ArgString returns the argument key as text ("" when absent): strings as
// they are, numbers and booleans formatted, objects and arrays as JSON.
func (s *Step) ArgString(key string) string {
	v, _ := s.Arg(key)
	return text(v)
}

// ResultJSON decodes the step's result as JSON; ok is false when it is not JSON.
func (s *Step) ResultJSON() (v any, ok bool) {
	return v, json.Unmarshal([]byte(s.Result), &v) == nil
}

// ResultString returns the top-level field key of a step whose Result is a
// JSON object, as text ("" when absent).
func (s *Step) ResultString(key string) string {
	v, _ := s.ResultJSON()
	m, _ := v.(map[string]any)
	return text(m[key])
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
