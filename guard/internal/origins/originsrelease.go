package origins

import (
	"slices"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// This file keeps the origins index bounded in a session that never ends:
// once steps are released from memory (trace.Recorder.Release), the index
// forgets the records of released results that another released record of
// the same tool repeats exactly — the same order read again and again by a
// long-running agent. What rules ask of the index is unchanged by it: the
// surviving record holds the same values with the same kinds, so a value's
// origins, a record's linked values and the turns naming an entity are the
// same.
//
// Rules also read a few released steps back by the index (stepAt): the
// lookups whose keys content quotes (entity mismatch), the turn a result
// served, the text of content the user pointed at. For those the index
// keeps a stub of each released tool step — its name, turn and short
// arguments, and the result of content the user pointed at — and, per
// lookup key, only the latest released lookup.
//
// A compaction reads the whole index, so it runs only when the index holds
// twice the origins it held after the last one: its cost is amortised
// O(1) per origin, and the index holds at most twice what it must.

// maxStubArgs bounds the arguments a released step's stub keeps.
const maxStubArgs = 1 << 10

type stubsKey struct{}

// stepStubs are the stubs of a trace's released steps, and how far the
// origins and steps were read for them.
type stepStubs struct {
	m       map[int]stepStub
	origins int // origins of released steps read for delegated content
	steps   int // steps stubbed
}

func stubsOf(t *trace.Trace) *stepStubs {
	return t.Memo(stubsKey{}, func() any { return &stepStubs{m: map[int]stepStub{}} }).(*stepStubs)
}

// stepStub is what the index keeps of a released step: a sixth of a
// trace.Step.
type stepStub struct {
	kind               trace.Kind
	name, args, result string
	turn               int
}

// releasedStep returns the stub kept for released step i of t, or nil.
func releasedStep(t *trace.Trace, i int) *trace.Step {
	if i >= t.Released || i < 0 {
		return nil
	}
	st, ok := stubsOf(t).m[i]
	if !ok {
		return nil
	}
	return &trace.Step{Index: i, Kind: st.kind, Name: st.name, Turn: st.turn, Args: st.args, Result: st.result}
}

// Release compacts the origins of t's steps below n (trace.Releaser).
func (ix *originIndex) Release(t *trace.Trace, n int) {
	st := stubsOf(t)
	delegated := map[int]bool{}
	for ; st.origins < len(ix.origins) && released(ix.origins[st.origins], n); st.origins++ {
		if o := ix.origins[st.origins]; o.kind == fromContent && o.delegated {
			delegated[o.step] = true
		}
	}
	for i := max(t.Released, st.steps); i < n; i++ {
		p := t.Step(i)
		if p == nil || p.Kind != trace.KindTool && p.Kind != trace.KindRetrieval || p.Blocked || p.Error != "" || p.Result == "" {
			continue
		}
		stub := stepStub{kind: p.Kind, name: p.Name, turn: p.Turn}
		if len(p.Args) <= maxStubArgs {
			stub.args = p.Args
		}
		if delegated[p.Index] {
			stub.result = p.Result
		}
		st.m[p.Index] = stub
	}
	st.steps = max(st.steps, n)
	if len(ix.origins) < 2*max(ix.compacted, 256) {
		return
	}
	ix.compact(n)
	ix.compacted = len(ix.origins)
	st.origins = 0
	for st.origins < len(ix.origins) && released(ix.origins[st.origins], n) {
		st.origins++
	}
	// Per lookup key, the latest released lookup; then the stubs still
	// pointed at, by a lookup or an origin.
	keep := map[int]bool{}
	for tok, steps := range ix.lookupKeys {
		i := 0
		for i < len(steps) && steps[i] < n {
			i++
		}
		if i > 1 {
			steps = slices.Delete(steps, 0, i-1)
			ix.lookupKeys[tok] = steps
		}
		if i > 0 {
			keep[steps[0]] = true
		}
	}
	for _, o := range ix.origins {
		if released(o, n) {
			keep[o.step] = true
		}
	}
	for i := range st.m {
		if !keep[i] {
			delete(st.m, i)
		}
	}
}

// released reports whether o belongs to a result of a step below n.
func released(o origin, n int) bool {
	return o.kind != fromUser && o.kind != fromCard && o.step < n
}

// compact merges the identical records of released steps into the latest
// of them and renumbers the origins.
func (ix *originIndex) compact(n int) {
	// The tokens of each released origin, from the postings.
	toks := make(map[int32][]string)
	for tok, list := range ix.tokens {
		for _, id := range list {
			if released(ix.origins[id], n) {
				toks[id] = append(toks[id], tok)
			}
		}
	}
	// A record's signature: its tool, and each field's kind, flags and
	// tokens, with the record's short values, in sorted order (a JSON
	// object's fields are read in no fixed order).
	type rec struct {
		ids   []int32
		tool  string
		parts []string
	}
	recs := map[int]*rec{}
	var order []int // records in origin order
	var b strings.Builder
	for id, o := range ix.origins {
		if !released(o, n) {
			continue
		}
		r := recs[o.rec]
		if r == nil {
			r = &rec{tool: o.tool}
			recs[o.rec] = r
			order = append(order, o.rec)
		}
		r.ids = append(r.ids, int32(id))
		b.Reset()
		b.WriteByte(byte(o.kind))
		if o.delegated {
			b.WriteByte('d')
		}
		if o.indirect {
			b.WriteByte('i')
		}
		t := toks[int32(id)]
		slices.Sort(t)
		for _, tok := range t {
			b.WriteByte(1)
			b.WriteString(tok)
		}
		r.parts = append(r.parts, b.String())
	}
	sigs := make(map[int]string, len(recs))
	latest := map[string]int{} // signature -> the latest record holding it
	for _, k := range order {
		r := recs[k]
		for _, v := range ix.recValues[k] {
			r.parts = append(r.parts, "\x02"+v)
		}
		slices.Sort(r.parts)
		sig := r.tool + "\x00" + strings.Join(r.parts, "\x00")
		sigs[k] = sig
		latest[sig] = k
	}
	drop := make([]bool, len(ix.origins))
	dropped := 0
	for _, k := range order {
		r := recs[k]
		if latest[sigs[k]] == k {
			continue
		}
		for _, id := range r.ids {
			drop[id] = true
		}
		dropped += len(r.ids)
		delete(ix.recValues, k)
	}
	if dropped == 0 {
		return
	}
	// Renumber: ids keep their order, so postings stay ascending.
	renum := make([]int32, len(ix.origins))
	kept := ix.origins[:0]
	for id, o := range ix.origins {
		if drop[id] {
			renum[id] = -1
			continue
		}
		renum[id] = int32(len(kept))
		kept = append(kept, o)
	}
	clear(ix.origins[len(kept):])
	ix.origins = kept
	if cap(kept) > 2*len(kept)+64 {
		ix.origins = slices.Clone(kept)
	}
	for tok, list := range ix.tokens {
		out := list[:0]
		for _, id := range list {
			if r := renum[id]; r >= 0 {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(ix.tokens, tok)
		} else if cap(out) > 4*len(out)+8 {
			ix.tokens[tok] = slices.Clone(out)
		} else {
			ix.tokens[tok] = out
		}
	}
}
