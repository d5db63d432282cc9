package guard

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
// same. Only the step a released origin points at is no longer in memory
// (stepAt gives an empty step), as for any released step; and the lookups
// released steps made (lookupKeys) are forgotten, since the entity-mismatch
// check reads their step.
//
// A compaction reads the whole index, so it runs only when the index holds
// twice the origins it held after the last one: its cost is amortised
// O(1) per origin, and the index holds at most twice what it must.

// Release compacts the origins of t's steps below n (trace.Releaser).
func (ix *originIndex) Release(t *trace.Trace, n int) {
	for tok, steps := range ix.lookupKeys {
		i := 0
		for i < len(steps) && steps[i] < n {
			i++
		}
		if i == len(steps) {
			delete(ix.lookupKeys, tok)
		} else if i > 0 {
			ix.lookupKeys[tok] = slices.Delete(steps, 0, i)
		}
	}
	if len(ix.origins) < 2*max(ix.compacted, 256) {
		return
	}
	ix.compact(n)
	ix.compacted = len(ix.origins)
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
	// tokens, in order, with the record's short values.
	type rec struct {
		ids []int32
		sig strings.Builder
	}
	recs := map[int]*rec{}
	var order []int // records in origin order
	for id, o := range ix.origins {
		if !released(o, n) {
			continue
		}
		r := recs[o.rec]
		if r == nil {
			r = &rec{}
			recs[o.rec] = r
			order = append(order, o.rec)
			r.sig.WriteString(o.tool)
		}
		r.ids = append(r.ids, int32(id))
		r.sig.WriteByte(0)
		r.sig.WriteByte(byte(o.kind))
		if o.delegated {
			r.sig.WriteByte('d')
		}
		if o.indirect {
			r.sig.WriteByte('i')
		}
		t := toks[int32(id)]
		slices.Sort(t)
		for _, tok := range t {
			r.sig.WriteByte(1)
			r.sig.WriteString(tok)
		}
	}
	latest := map[string]int{} // signature -> the latest record holding it
	for _, k := range order {
		r := recs[k]
		for _, v := range ix.recValues[k] {
			r.sig.WriteByte(2)
			r.sig.WriteString(v)
		}
		latest[r.sig.String()] = k
	}
	drop := make([]bool, len(ix.origins))
	dropped := 0
	for _, k := range order {
		r := recs[k]
		if latest[r.sig.String()] == k {
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
