package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Card is the pinned memory card of one conversation: every constraint the
// user stated, with its history. A statement on a kind and key that is
// already active supersedes the earlier one, unless it says the same thing
// again; a revocation lifts it. Superseded and revoked constraints stay on
// the card, so History shows what changed and when.
//
// Applying a constraint costs the same however long the card is, and Text
// is rendered once per change, so that a card kept for a whole
// conversation costs each model call what the new turn brings.
//
// The zero value is an empty card ready to use. A Card is safe for
// concurrent use; Observe calls for one conversation should still be made
// in turn order, since each applies its turn when its extraction returns.
type Card struct {
	mu       sync.RWMutex
	all      []Constraint
	active   map[slot]int      // slot -> index in all of its active constraint
	byKind   [len(kinds)][]int // indexes in all of the active constraints, by kind rank, ascending
	replaced map[int]int       // index of a constraint -> index of the one it superseded
	lifted   []liftedKey       // prohibitions revoked, in the order first revoked
	text     *string           // Text, rendered; nil when the card changed since
	view     []Constraint      // the active constraints, in order; nil when the card changed since
	version  uint64            // changes so far
	// nactive is len(active), read without the lock (Active).
	nactive atomic.Int32
}

type liftedKey struct {
	key  string
	turn int // the last turn it was revoked in
}

// Extract runs ex over the user turn text, given the card's active
// constraints current, and returns what it found, normalised, with Turn
// set to turn, as Observe would apply it: record the result as a card step
// (CardStep). A nil ex means RuleBased(nil).
//
// Constraints that fail Validate, and superseded ones (only the card
// supersedes), are left out and reported in the error, wrapping ErrInvalid,
// joined with any error from ex; the others are returned all the same.
func Extract(ctx context.Context, ex Extractor, turn int, text string, current []Constraint) ([]Constraint, error) {
	if ex == nil {
		ex = RuleBased(nil)
	}
	got, err := ex.Extract(ctx, turn, text, current)
	kept, kerr := keep(got, turn)
	return kept, errors.Join(err, kerr)
}

// keep normalises what an extractor found, with Turn set to turn, and
// leaves out what fails Validate or is superseded, reporting it.
func keep(got []Constraint, turn int) ([]Constraint, error) {
	var errs []error
	kept := make([]Constraint, 0, len(got))
	for _, g := range got {
		n := normalize(g, turn)
		if err := checkNew(n); err != nil {
			errs = append(errs, err)
			continue
		}
		kept = append(kept, n)
	}
	return kept, errors.Join(errs...)
}

// Extract runs ex over the user turn text, given the card's active
// constraints, and returns what it found, as the package-level Extract
// does, without applying it. With RuleBased, the card is read by kind and
// key, so a turn costs the same however long the card has grown.
func (c *Card) Extract(ctx context.Context, ex Extractor, turn int, text string) ([]Constraint, error) {
	if ex == nil {
		ex = RuleBased(nil)
	}
	var r *ruleBased
	switch e := ex.(type) {
	case *ruleBased:
		r = e
	case ruleBased:
		r = &e
	default:
		return Extract(ctx, ex, turn, text, c.activeView())
	}
	c.mu.RLock()
	got := r.extract(turn, text, c.value)
	c.mu.RUnlock()
	return keep(got, turn)
}

// value returns the value of the active constraint in s; c.mu is held.
func (c *Card) value(s slot) (string, bool) {
	if i, ok := c.active[s]; ok {
		return c.all[i].Value, true
	}
	return "", false
}

// Observe runs ex over the user turn text, gives it the card's active
// constraints, and applies what it returns: Extract, then apply. The
// result is the constraints applied: record them as a card step
// (CardStep), so that CardFromTrace rebuilds the same card. A nil ex means
// RuleBased(nil). Errors are Extract's.
func (c *Card) Observe(ctx context.Context, ex Extractor, turn int, text string) ([]Constraint, error) {
	kept, err := c.Extract(ctx, ex, turn, text)
	c.mu.Lock()
	for _, n := range kept {
		c.apply(n)
	}
	c.mu.Unlock()
	return kept, err
}

// Apply applies constraints as they are, in order: an Active one
// supersedes the active constraint with the same kind and key (or is
// dropped when it restates its value), a Revoked one lifts it. Constraints
// that fail Validate, or are Superseded, are skipped and reported in the
// error, wrapping ErrInvalid.
func (c *Card) Apply(cs ...Constraint) error {
	var errs []error
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range cs {
		if err := checkNew(n); err != nil {
			errs = append(errs, err)
			continue
		}
		c.apply(n)
	}
	return errors.Join(errs...)
}

func checkNew(n Constraint) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if n.Status == Superseded {
		return &Error{Op: "validate", Err: fmt.Errorf("%w: %s %q: a new constraint cannot be superseded", ErrInvalid, n.Kind, n.Key)}
	}
	return nil
}

// apply applies one valid constraint; c.mu is held. It costs the same
// however long the card is.
func (c *Card) apply(n Constraint) {
	defer c.countActive()
	n.Ended = 0
	if c.active == nil {
		c.active, c.replaced = map[slot]int{}, map[int]int{}
	}
	s := slot{n.Kind, n.Key}
	prev := -1
	if i, ok := c.active[s]; ok {
		e := &c.all[i]
		switch {
		case n.Status == Revoked:
			e.Status, e.Ended = Revoked, n.Turn
			delete(c.active, s)
			c.unlist(e.Kind, i)
			c.lift(e.Kind, e.Key, n.Turn)
			c.changed()
			return
		case fold(e.Value) == fold(n.Value):
			return // said again: the first statement stands
		}
		e.Status, e.Ended = Superseded, n.Turn
		delete(c.active, s)
		c.unlist(e.Kind, i)
		prev = i
	}
	if n.Status != Active {
		return
	}
	c.all = append(c.all, n)
	c.active[s] = len(c.all) - 1
	if k := kindRank(n.Kind); k >= 0 {
		c.byKind[k] = append(c.byKind[k], len(c.all)-1)
	}
	if prev >= 0 {
		c.replaced[len(c.all)-1] = prev
	}
	c.changed()
}

func (c *Card) lift(kind Kind, key string, turn int) {
	if kind != KindProhibition {
		return
	}
	for i := range c.lifted {
		if c.lifted[i].key == key {
			c.lifted[i].turn = max(c.lifted[i].turn, turn)
			return
		}
	}
	c.lifted = append(c.lifted, liftedKey{key, turn})
}

// unlist takes the constraint at index i off its kind's active list; c.mu
// is held. The lists are ascending, so it is a binary search.
func (c *Card) unlist(kind Kind, i int) {
	k := kindRank(kind)
	if k < 0 {
		return
	}
	if j, ok := slices.BinarySearch(c.byKind[k], i); ok {
		c.byKind[k] = slices.Delete(c.byKind[k], j, j+1)
	}
}

// changed drops what was rendered from the card; c.mu is held.
func (c *Card) changed() { c.text, c.view = nil, nil; c.version++ }

// changes returns how many times the card has changed: two equal counts
// mean the same card.
func (c *Card) changes() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.version
}

// countActive keeps nactive; c.mu is held.
func (c *Card) countActive() { c.nactive.Store(int32(len(c.active))) }

// hasActive reports whether the card has an active constraint, without
// taking its lock: a tool call judged against a card with none has nothing
// to read on it.
func (c *Card) hasActive() bool { return c.nactive.Load() > 0 }

// reindex rebuilds the indexes from all; c.mu is held.
func (c *Card) reindex() {
	defer c.countActive()
	c.active, c.replaced, c.lifted = map[slot]int{}, map[int]int{}, nil
	c.byKind = [len(kinds)][]int{}
	last := map[slot]int{}
	for i, e := range c.all {
		s := slot{e.Kind, e.Key}
		if p, ok := last[s]; ok && c.all[p].Status == Superseded {
			c.replaced[i] = p
		}
		last[s] = i
		switch e.Status {
		case Active:
			if j, ok := c.active[s]; ok { // two active on one slot: the later holds
				c.unlist(c.all[j].Kind, j)
			}
			c.active[s] = i
			if k := kindRank(e.Kind); k >= 0 {
				c.byKind[k] = append(c.byKind[k], i)
			}
		case Revoked:
			c.lift(e.Kind, e.Key, e.Ended)
		}
	}
	c.changed()
}

// activeView returns the active constraints, shared: callers only read it.
func (c *Card) activeView() []Constraint {
	c.mu.RLock()
	v := c.view
	c.mu.RUnlock()
	if v != nil {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view == nil {
		c.view = make([]Constraint, 0, len(c.active))
		for _, i := range c.activeIndexes() {
			c.view = append(c.view, c.all[i])
		}
	}
	return c.view
}

// activeIndexes returns the indexes of the active constraints, in order;
// c.mu is held.
func (c *Card) activeIndexes() []int {
	out := make([]int, 0, len(c.active))
	for _, l := range c.byKind {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

// activeOf returns the indexes of the active constraints of kind, in
// order, shared; c.mu is held.
func (c *Card) activeOf(kind Kind) []int {
	if k := kindRank(kind); k >= 0 {
		return c.byKind[k]
	}
	return nil
}

// Active returns the constraints that hold, in the order they were stated.
func (c *Card) Active() []Constraint {
	v := c.activeView()
	if len(v) == 0 {
		return nil
	}
	return slices.Clone(v)
}

// ActiveOf returns the active constraints of kind, in the order they were
// stated, each followed by those it replaced on the same key, latest
// first and each value once: for addresses, the current one and the ones
// the user moved from. It goes back at most MaxReplaced replacements per
// constraint, so that it costs what the latest constraints are, not the
// card's whole history: a user who moves back and forth between two
// addresses all conversation long has two.
func (c *Card) ActiveOf(kind Kind) []Constraint {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Constraint
	for _, i := range c.activeOf(kind) {
		first := len(out)
		out = append(out, c.all[i])
		n := 0
		for j, ok := c.replaced[i]; ok && n < MaxReplaced; j, ok = c.replaced[j] {
			n++
			if v := c.all[j].Value; !slices.ContainsFunc(out[first:], func(k Constraint) bool { return k.Value == v }) {
				out = append(out, c.all[j])
			}
		}
	}
	return out
}

// MaxReplaced is how many replacements back ActiveOf looks per constraint.
const MaxReplaced = 16

// History returns every constraint the card has held, superseded and
// revoked ones included, in the order they were stated.
func (c *Card) History() []Constraint {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.all)
}

// cardHeader opens the card's text.
const cardHeader = "Pinned user constraints (must be respected):"

// MaxTextIDs is how many ids Text shows, the latest: a conversation that
// names a new order in every turn keeps a short card. The others stay on
// the card, in History, and are enforced.
const MaxTextIDs = 8

// Text renders the card for a system prompt: a header line, then one line
// per active constraint, prohibitions first (of ids, the MaxTextIDs
// latest), then a line per lifted prohibition, so that the model knows the
// channel is open again. It is "" when there is nothing to say. The text
// is rendered once per change of the card. For example:
//
//	Pinned user constraints (must be respected):
//	- prohibition sms: 不要自动给我发短信通知 (turn 6)
//	- address delivery: 48 Pine Avenue, Shelbyville (turn 5, replaces "12 Oak Street, Springfield" from turn 1)
//	- no longer prohibited: call (lifted in turn 9)
func (c *Card) Text() string {
	c.mu.RLock()
	t := c.text
	c.mu.RUnlock()
	if t != nil {
		return *t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.text == nil {
		s := c.render()
		c.text = &s
	}
	return *c.text
}

// shown calls fn with the index of each active constraint Text shows, in
// its order: of ids, the MaxTextIDs latest. c.mu is held.
func (c *Card) shown(fn func(i int)) {
	for k, active := range c.byKind {
		if kinds[k] == KindID && len(active) > MaxTextIDs {
			active = active[len(active)-MaxTextIDs:]
		}
		for _, i := range active {
			fn(i)
		}
	}
}

// render writes Text; c.mu is held.
func (c *Card) render() string {
	var b strings.Builder
	c.shown(func(i int) { c.line(&b, i) })
	for _, l := range c.lifted {
		if _, ok := c.active[slot{KindProhibition, l.key}]; !ok {
			fmt.Fprintf(&b, "\n- no longer prohibited: %s (lifted in turn %d)", l.key, l.turn)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return cardHeader + b.String()
}

// line writes the card's line for the constraint at index i; c.mu is held.
func (c *Card) line(b *strings.Builder, i int) {
	e := c.all[i]
	b.WriteString("\n- ")
	b.WriteString(strings.ReplaceAll(string(e.Kind), "_", " "))
	switch {
	case e.Kind == KindFact || e.Key == string(e.Kind):
	case e.Kind == KindID:
		key, _, _ := strings.Cut(e.Key, ":")
		b.WriteString(" " + key)
	default:
		b.WriteString(" " + e.Key)
	}
	if e.Value != "" {
		b.WriteString(": " + clip(e.Value, 200))
	}
	fmt.Fprintf(b, " (turn %d", e.Turn)
	if p, ok := c.replaced[i]; ok {
		fmt.Fprintf(b, ", replaces %q from turn %d", clip(c.all[p].Value, 80), c.all[p].Turn)
	}
	b.WriteString(")")
}

// clip cuts s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// cardJSON is the JSON form of a Card.
type cardJSON struct {
	Constraints []Constraint `json:"constraints"`
}

// MarshalJSON writes the card as {"constraints":[...]}, its whole history
// in order; see the package documentation for the format. Text is not
// HTML-escaped, though json.Marshal escapes it again; use a json.Encoder
// with SetEscapeHTML(false) to keep "<", ">" and "&" as they are.
func (c *Card) MarshalJSON() ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return marshal(cardJSON{Constraints: nonNil(c.all)})
}

// UnmarshalJSON replaces the card with the one in b. Every constraint must
// pass Validate; otherwise the card is left as it was.
func (c *Card) UnmarshalJSON(b []byte) error {
	var v cardJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return &Error{Op: "decode", Err: err}
	}
	for _, e := range v.Constraints {
		if err := e.Validate(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.all = v.Constraints
	c.reindex()
	c.mu.Unlock()
	return nil
}

func nonNil(cs []Constraint) []Constraint {
	if cs == nil {
		return []Constraint{}
	}
	return cs
}

// marshal encodes v as compact JSON without HTML escaping, as trace files are.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
