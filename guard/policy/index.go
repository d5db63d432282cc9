package policy

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/agentguard/agentguard/guard/internal/detect"
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
		eachTopValue(s.Args, func(key string) {
			k := entityRef{s.Name, key}
			if l := x.byEntity[k]; len(l) == 0 || l[len(l)-1] != x.n { // two arguments with one value
				x.byEntity[k] = append(l, x.n)
			}
		})
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

// plainKey is the entity key of an argument value, a string or number
// token: the string, an integer as written, another number in its
// shortest form.
func plainKey(tok jsontext.Token) (string, bool) {
	switch tok.Kind() {
	case '"':
		s := validUTF8(tok.String())
		return s, s != ""
	case '0':
		lit := tok.String()
		if !strings.ContainsAny(lit, ".eE") {
			if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return strconv.FormatInt(n, 10), true
			}
		}
		f, err := strconv.ParseFloat(lit, 64)
		return strconv.FormatFloat(f, 'g', -1, 64), err == nil
	}
	return "", false
}

// namesEntity reports whether args (JSON) hold entity as a top-level value.
func namesEntity(args, entity string) bool {
	found := false
	eachTopValue(args, func(key string) { found = found || key == entity })
	return found
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
// text as a string, and a result the recorder cut (Step.Truncated) that no
// longer decodes as an error.
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
	switch {
	case ok:
	case s.Truncated:
		// A record cut short when it was recorded is no record: a check
		// that reads it cannot be established (a warning), rather than
		// reading the cut text as a string.
		v = types.NewErr("the %s result at step %d was cut short when it was recorded: the record is incomplete", s.Name, i)
	default:
		v = types.String(res)
	}
	if x.results == nil {
		x.results = map[int]ref.Val{}
	}
	x.results[i] = v
	return v
}

// readJSON hands fn a decoder over s, an object or an array (other text
// reports false), and reports whether fn read all of s as one value. A
// name repeated in an object is read twice (the last wins where it
// matters); invalid UTF-8 is read as encoding/json reads it, each bad
// byte a U+FFFD.
func readJSON(s string, fn func(dec *jsontext.Decoder) bool) bool {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	ok := false
	detect.ReadJSON(s, func(dec *jsontext.Decoder) {
		if ok = fn(dec); ok {
			_, err := dec.ReadToken()
			ok = err == io.EOF
		}
	})
	return ok
}

// decodeJSONValue decodes a JSON text, an object or an array, into CEL
// values: maps with string keys, lists, strings, ints (for integers as
// written), doubles, bools and null. Converting once, rather than
// wrapping Go maps, makes every later field access a map lookup. Text that
// is not such JSON gives false.
func decodeJSONValue(s string) (ref.Val, bool) {
	var v ref.Val
	ok := readJSON(s, func(dec *jsontext.Decoder) bool {
		var ok bool
		v, ok = celValueOf(dec, 0)
		return ok
	})
	return v, ok
}

// celValueOf reads the next value of dec as a CEL value.
func celValueOf(dec *jsontext.Decoder, depth int) (ref.Val, bool) {
	if depth > maxDepth {
		return nil, false
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, false
	}
	switch tok.Kind() {
	case '{':
		m := map[ref.Val]ref.Val{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			name := types.String(validUTF8(tok.String())) // before the next read voids tok
			v, ok := celValueOf(dec, depth+1)
			if !ok {
				return nil, false
			}
			m[name] = v // a repeated name: the last wins, as in encoding/json
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, m), true
	case '[':
		l := []ref.Val{}
		for dec.PeekKind() != ']' {
			v, ok := celValueOf(dec, depth+1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		return types.NewRefValList(types.DefaultTypeAdapter, l), true
	case '"':
		return types.String(validUTF8(tok.String())), true
	case 't':
		return types.True, true
	case 'f':
		return types.False, true
	case 'n':
		return types.NullValue, true
	case '0':
		lit := tok.String()
		if !strings.ContainsAny(lit, ".eE") {
			if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return types.Int(n), true
			}
		}
		f, _ := strconv.ParseFloat(lit, 64) // out of range: ±Inf, as encoding/json would refuse and a double holds
		return types.Double(f), true
	}
	return nil, false
}

// validUTF8 replaces each invalid byte of s with U+FFFD, as encoding/json
// does when it decodes a string.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// eachTopValue calls fn with the entity key of each member of the JSON
// object args whose value is a string or a number (see plainKey).
func eachTopValue(args string, fn func(key string)) {
	readJSON(args, func(dec *jsontext.Decoder) bool {
		if dec.PeekKind() != '{' {
			return false
		}
		dec.ReadToken()
		for dec.PeekKind() != '}' {
			if _, err := dec.ReadToken(); err != nil { // the name
				return false
			}
			switch dec.PeekKind() {
			case '"', '0':
				tok, err := dec.ReadToken()
				if err != nil {
					return false
				}
				if key, ok := plainKey(tok); ok {
					fn(key)
				}
			default:
				if err := dec.SkipValue(); err != nil {
					return false
				}
			}
		}
		_, err := dec.ReadToken()
		return err == nil
	})
}
