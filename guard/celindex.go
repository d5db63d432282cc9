package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/agentguard/agentguard/trace"
)

// policyIndex is a trace's index for the policy checks' last, calls and
// results: the tool calls that ran and did not fail, by tool and by tool
// and entity (each top-level string or number argument), with each step's
// arguments and result decoded once, on first use. It is kept in the
// trace's Memo and brought up to date with the steps recorded since the
// last call, so a lookup costs the same at step 10 as at step 10,000.
//
// When steps are released from memory (trace.Recorder.Release), the index
// keeps, decoded, the arguments and result of the latest call of each tool
// naming each entity, so last() still answers about calls long gone;
// calls() and results() then list the calls still in memory, plus that
// latest one when they name an entity.
type policyIndex struct {
	n        int                 // steps indexed
	byTool   map[string][]int    // step indexes, ascending
	byEntity map[entityRef][]int // step indexes, ascending
	argVals  map[int]ref.Val     // decoded arguments, by step
	results  map[int]ref.Val     // decoded results, by step
}

type entityRef struct{ tool, entity string }

type policyIndexKey struct{}

// indexOf returns t's index, updated with its new steps. The index may
// have seen more steps than t holds (a shorter prefix of the same trace,
// offline): lookups bound themselves by t.Len().
func indexOf(t *trace.Trace) *policyIndex {
	x := t.Memo(policyIndexKey{}, func() any {
		return &policyIndex{byTool: map[string][]int{}, byEntity: map[entityRef][]int{}}
	}).(*policyIndex)
	x.update(t)
	return x
}

// update indexes t's steps that x has not seen.
func (x *policyIndex) update(t *trace.Trace) {
	x.n = max(x.n, t.Released) // an index begun after a release reads what is kept
	for ; x.n < t.Len(); x.n++ {
		s := t.Step(x.n)
		if s.Kind != trace.KindTool || s.Blocked || s.Error != "" {
			continue
		}
		x.byTool[s.Name] = append(x.byTool[s.Name], x.n)
		v, ok := decodeJSON(s.Args)
		m, isMap := v.(map[string]any)
		if !ok || !isMap {
			continue
		}
		for _, val := range m {
			if key, ok := plainKey(val); ok {
				k := entityRef{s.Name, key}
				if l := x.byEntity[k]; len(l) == 0 || l[len(l)-1] != x.n { // two arguments with one value
					x.byEntity[k] = append(l, x.n)
				}
			}
		}
	}
}

// Release takes in t's steps below n, which are about to leave memory
// (trace.Releaser): it indexes them, decodes and keeps the arguments and
// result of each entity's latest call among them, and forgets the rest.
func (x *policyIndex) Release(t *trace.Trace, n int) {
	x.update(t)
	keep := map[int]bool{}
	for k, l := range x.byEntity {
		i := 0
		for i < len(l) && l[i] < n {
			i++
		}
		if i == 0 {
			continue
		}
		if i == len(l) { // the latest call is released: keep it, decoded
			keep[l[i-1]] = true
			i--
		}
		x.byEntity[k] = slices.Delete(l, 0, i)
	}
	for tool, l := range x.byTool {
		i := 0
		for i < len(l) && l[i] < n {
			i++
		}
		if i == len(l) {
			delete(x.byTool, tool)
		} else if i > 0 {
			x.byTool[tool] = slices.Delete(l, 0, i)
		}
	}
	for i := range keep {
		x.args(t, i)
		x.result(t, i)
	}
	for i := range x.argVals {
		if i < n && !keep[i] {
			delete(x.argVals, i)
		}
	}
	for i := range x.results {
		if i < n && !keep[i] {
			delete(x.results, i)
		}
	}
}

// plainKey is the entity key of a decoded argument value.
func plainKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

// namesEntity reports whether args (JSON) hold entity as a top-level value.
func namesEntity(args, entity string) bool {
	v, _ := decodeJSON(args)
	m, _ := v.(map[string]any)
	for _, val := range m {
		if k, ok := plainKey(val); ok && k == entity {
			return true
		}
	}
	return false
}

// latest returns the last indexed step of tool naming entity before step n.
func (x *policyIndex) latest(tool, entity string, n int) (int, bool) {
	l := x.byEntity[entityRef{tool, entity}]
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] < n {
			return l[i], true
		}
	}
	return 0, false
}

// list returns the indexed steps of tool (naming entity) before step n.
func (x *policyIndex) list(tool, entity string, hasEntity bool, n int) []int {
	var l []int
	if hasEntity {
		l = x.byEntity[entityRef{tool, entity}]
	} else {
		l = x.byTool[tool]
	}
	end := len(l)
	for end > 0 && l[end-1] >= n {
		end--
	}
	return l[:end]
}

// args returns step i's decoded arguments.
func (x *policyIndex) args(t *trace.Trace, i int) ref.Val {
	if v, ok := x.argVals[i]; ok {
		return v
	}
	s := t.Step(i)
	if s == nil { // released, and not the latest of its entity
		return emptyMap
	}
	v := argsValue(s.Args)
	if x.argVals == nil {
		x.argVals = map[int]ref.Val{}
	}
	x.argVals[i] = v
	return v
}

// result returns step i's decoded result: JSON as maps and lists, other
// text as a string.
func (x *policyIndex) result(t *trace.Trace, i int) ref.Val {
	if v, ok := x.results[i]; ok {
		return v
	}
	s := t.Step(i)
	if s == nil { // released, and not the latest of its entity
		return types.NullValue
	}
	res := s.Result
	v, ok := decodeJSONValue(res)
	if !ok {
		v = types.String(res)
	}
	if x.results == nil {
		x.results = map[int]ref.Val{}
	}
	x.results[i] = v
	return v
}

// decodeJSON decodes a JSON text into plain values, integers as int64 and
// other numbers as float64, so that expressions compare and add them as
// written. Text that is not JSON gives false.
func decodeJSON(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return plainNumbers(v), true
}

// decodeJSONValue decodes a JSON text into CEL values: maps with string
// keys, lists, strings, ints (for integers as written), doubles, bools and
// null. Converting once, rather than wrapping Go maps, makes every later
// field access a map lookup.
func decodeJSONValue(s string) (ref.Val, bool) {
	if v, ok := scanJSONValue(s); ok {
		return v, true
	}
	v, ok := decodeJSON(s)
	if !ok {
		return nil, false
	}
	return celValue(v), true
}

func celValue(v any) ref.Val {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[ref.Val]ref.Val, len(x))
		for k, e := range x {
			m[types.String(k)] = celValue(e)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, m)
	case []any:
		l := make([]ref.Val, len(x))
		for i, e := range x {
			l[i] = celValue(e)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, l)
	case string:
		return types.String(x)
	case int64:
		return types.Int(x)
	case float64:
		return types.Double(x)
	case bool:
		return types.Bool(x)
	case nil:
		return types.NullValue
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

func plainNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	case json.Number:
		if !bytes.ContainsAny([]byte(x), ".eE") {
			if i, err := x.Int64(); err == nil {
				return i
			}
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// scanJSONValue decodes a JSON text into CEL values as decodeJSONValue
// does, without encoding/json's decoder and its intermediate Go values:
// tool arguments are decoded on every checked call. It reports false for
// what it does not handle alone (invalid JSON, escapes it leaves to
// strconv's reading of JSON strings failing, nesting past maxDepth), and
// the caller falls back to decodeJSONValue.
func scanJSONValue(s string) (ref.Val, bool) {
	sc := jsonScanner{s: s}
	sc.space()
	if sc.i == len(s) || (s[sc.i] != '{' && s[sc.i] != '[') {
		return nil, false
	}
	v, ok := sc.value(0)
	if !ok {
		return nil, false
	}
	sc.space()
	return v, sc.i == len(s)
}

type jsonScanner struct {
	s string
	i int
}

func (sc *jsonScanner) space() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t' || sc.s[sc.i] == '\n' || sc.s[sc.i] == '\r') {
		sc.i++
	}
}

func (sc *jsonScanner) value(depth int) (ref.Val, bool) {
	if depth > maxDepth {
		return nil, false
	}
	sc.space()
	if sc.i >= len(sc.s) {
		return nil, false
	}
	switch c := sc.s[sc.i]; {
	case c == '{':
		sc.i++
		m := map[ref.Val]ref.Val{}
		sc.space()
		if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
			sc.i++
			return types.NewRefValMap(types.DefaultTypeAdapter, m), true
		}
		for {
			sc.space()
			k, ok := sc.str()
			if !ok {
				return nil, false
			}
			sc.space()
			if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
				return nil, false
			}
			sc.i++
			v, ok := sc.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[types.String(k)] = v // a repeated key: the last wins, as in encoding/json
			sc.space()
			if sc.i >= len(sc.s) {
				return nil, false
			}
			if sc.s[sc.i] == '}' {
				sc.i++
				return types.NewRefValMap(types.DefaultTypeAdapter, m), true
			}
			if sc.s[sc.i] != ',' {
				return nil, false
			}
			sc.i++
		}
	case c == '[':
		sc.i++
		var l []ref.Val
		sc.space()
		if sc.i < len(sc.s) && sc.s[sc.i] == ']' {
			sc.i++
			return types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{}), true
		}
		for {
			v, ok := sc.value(depth + 1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
			sc.space()
			if sc.i >= len(sc.s) {
				return nil, false
			}
			if sc.s[sc.i] == ']' {
				sc.i++
				return types.NewRefValList(types.DefaultTypeAdapter, l), true
			}
			if sc.s[sc.i] != ',' {
				return nil, false
			}
			sc.i++
		}
	case c == '"':
		str, ok := sc.str()
		return types.String(str), ok
	case c == 't' && strings.HasPrefix(sc.s[sc.i:], "true"):
		sc.i += 4
		return types.True, true
	case c == 'f' && strings.HasPrefix(sc.s[sc.i:], "false"):
		sc.i += 5
		return types.False, true
	case c == 'n' && strings.HasPrefix(sc.s[sc.i:], "null"):
		sc.i += 4
		return types.NullValue, true
	case c == '-' || (c >= '0' && c <= '9'):
		start := sc.i
		end := scanNumber(sc.s, sc.i)
		if end == start {
			return nil, false
		}
		sc.i = end
		lit := sc.s[start:end]
		if !strings.ContainsAny(lit, ".eE") {
			if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return types.Int(n), true
			}
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, false
		}
		return types.Double(f), true
	}
	return nil, false
}

// str reads a JSON string at sc.i; strings with escapes are read by
// encoding/json, which knows JSON's escapes.
func (sc *jsonScanner) str() (string, bool) {
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false
	}
	end, esc, ok := scanString(sc.s, sc.i)
	if !ok {
		return "", false
	}
	raw := sc.s[sc.i:end]
	sc.i = end
	if !esc {
		if !utf8.ValidString(raw) {
			return "", false
		}
		return raw[1 : len(raw)-1], true
	}
	var out string
	if json.Unmarshal([]byte(raw), &out) != nil {
		return "", false
	}
	return out, true
}
