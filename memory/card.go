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
	"unicode/utf8"
)

// Card is the pinned memory card of one conversation: every constraint the
// user stated, with its history. A statement on a kind and key that is
// already active supersedes the earlier one, unless it says the same thing
// again; a revocation lifts it. Superseded and revoked constraints stay on
// the card, so History shows what changed and when.
//
// The zero value is an empty card ready to use. A Card is safe for
// concurrent use; Observe calls for one conversation should still be made
// in turn order, since each applies its turn when its extraction returns.
type Card struct {
	mu  sync.RWMutex
	all []Constraint
}

// Observe runs ex over the user turn text, gives it the card's active
// constraints, and applies what it returns. The result is the constraints
// applied, normalised, with Turn set to turn: record them as a card step
// (CardStep), so that CardFromTrace rebuilds the same card. A nil ex means
// RuleBased(nil).
//
// Constraints that fail Validate, and superseded ones (only the card
// supersedes), are left out and reported in the error, wrapping ErrInvalid,
// joined with any error from ex; the others are applied all the same.
func (c *Card) Observe(ctx context.Context, ex Extractor, turn int, text string) ([]Constraint, error) {
	if ex == nil {
		ex = RuleBased(nil)
	}
	got, err := ex.Extract(ctx, turn, text, c.Active())
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	kept := make([]Constraint, 0, len(got))
	for _, g := range got {
		n := normalize(g, turn)
		if err := checkNew(n); err != nil {
			errs = append(errs, err)
			continue
		}
		kept = append(kept, n)
	}
	c.mu.Lock()
	for _, n := range kept {
		c.apply(n)
	}
	c.mu.Unlock()
	return kept, errors.Join(errs...)
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

// apply applies one valid constraint; c.mu is held.
func (c *Card) apply(n Constraint) {
	n.Ended = 0
	for i := range c.all {
		e := &c.all[i]
		if e.Status != Active || e.Kind != n.Kind || e.Key != n.Key {
			continue
		}
		if n.Status == Revoked {
			e.Status, e.Ended = Revoked, n.Turn
			continue
		}
		if fold(e.Value) == fold(n.Value) {
			return // said again: the first statement stands
		}
		e.Status, e.Ended = Superseded, n.Turn
	}
	if n.Status == Active {
		c.all = append(c.all, n)
	}
}

// Active returns the constraints that hold, in the order they were stated.
func (c *Card) Active() []Constraint {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Constraint
	for _, e := range c.all {
		if e.Status == Active {
			out = append(out, e)
		}
	}
	return out
}

// History returns every constraint the card has held, superseded and
// revoked ones included, in the order they were stated.
func (c *Card) History() []Constraint {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.all)
}

// cardHeader opens the card's text.
const cardHeader = "Pinned user constraints (must be respected):"

// Text renders the card for a system prompt: a header line, then one line
// per active constraint, prohibitions first, then a line per lifted
// prohibition, so that the model knows the channel is open again. It is ""
// when there is nothing to say. For example:
//
//	Pinned user constraints (must be respected):
//	- prohibition sms: 不要自动给我发短信通知 (turn 6)
//	- address delivery: 48 Pine Avenue, Shelbyville (turn 5, replaces "12 Oak Street, Springfield" from turn 1)
//	- no longer prohibited: call (lifted in turn 9)
func (c *Card) Text() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var active []int
	for i, e := range c.all {
		if e.Status == Active {
			active = append(active, i)
		}
	}
	slices.SortStableFunc(active, func(a, b int) int { return kindRank(c.all[a].Kind) - kindRank(c.all[b].Kind) })
	var b strings.Builder
	for _, i := range active {
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
		fmt.Fprintf(&b, " (turn %d", e.Turn)
		if p := c.previous(i); p >= 0 {
			fmt.Fprintf(&b, ", replaces %q from turn %d", clip(c.all[p].Value, 80), c.all[p].Turn)
		}
		b.WriteString(")")
	}
	lifted := map[string]bool{}
	for _, e := range c.all {
		if e.Kind == KindProhibition && e.Status == Revoked && !lifted[e.Key] && !c.holds(KindProhibition, e.Key) {
			lifted[e.Key] = true
			fmt.Fprintf(&b, "\n- no longer prohibited: %s (lifted in turn %d)", e.Key, c.liftedIn(e.Key))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return cardHeader + b.String()
}

// previous returns the index of the superseded constraint that c.all[i]
// replaced, or -1; c.mu is held.
func (c *Card) previous(i int) int {
	e := c.all[i]
	for j := i - 1; j >= 0; j-- {
		p := c.all[j]
		if p.Kind == e.Kind && p.Key == e.Key && p.Status == Superseded {
			return j
		}
	}
	return -1
}

// holds reports whether an active constraint has kind and key; c.mu is held.
func (c *Card) holds(kind Kind, key string) bool {
	for _, e := range c.all {
		if e.Status == Active && e.Kind == kind && e.Key == key {
			return true
		}
	}
	return false
}

// liftedIn returns the last turn in which a prohibition on key was
// revoked; c.mu is held.
func (c *Card) liftedIn(key string) int {
	turn := 0
	for _, e := range c.all {
		if e.Kind == KindProhibition && e.Key == key && e.Status == Revoked {
			turn = max(turn, e.Ended)
		}
	}
	return turn
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
