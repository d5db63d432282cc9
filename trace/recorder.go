package trace

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultMaxField is the size cap, in bytes, that a Recorder applies to a
// step's Args and Result when RecorderOptions.MaxField is zero.
const DefaultMaxField = 64 << 10

// TruncationMarker ends a field that the recorder cut to its size cap.
const TruncationMarker = "…[truncated]"

// RecorderOptions configures a Recorder. The zero value is ready to use.
type RecorderOptions struct {
	// MaxField caps every free-text field of each recorded step (name,
	// arguments, result, error, proposed calls, a finding's message and
	// evidence), in bytes; longer values are cut at a rune boundary, end with
	// TruncationMarker and mark the step Truncated. Zero means
	// DefaultMaxField; negative means no cap. Invalid UTF-8 is always
	// replaced by U+FFFD.
	MaxField int
	// Now is the recorder's clock: it reads the trace's Start. Nil means
	// time.Now. A guard passes its own, so that one clock dates a guarded
	// trace and its steps.
	Now func() time.Time
}

// Recorder builds a Trace step by step. It is safe for concurrent use; the
// zero value is not, use NewRecorder.
type Recorder struct {
	mu       sync.Mutex
	tr       Trace
	maxField int
}

// NewRecorder starts an empty trace with the given identity.
func NewRecorder(id, sessionID, route string, opts RecorderOptions) *Recorder {
	max := opts.MaxField
	if max == 0 {
		max = DefaultMaxField
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Recorder{
		tr:       Trace{ID: id, SessionID: sessionID, Route: route, Start: now().UTC(), Steps: make([]*Step, 0, 16)},
		maxField: max,
	}
}

// ID returns the trace id.
func (r *Recorder) ID() string { return r.tr.ID } // immutable after NewRecorder

// SessionID returns the session id.
func (r *Recorder) SessionID() string { return r.tr.SessionID }

// Route returns the route the trace serves.
func (r *Recorder) Route() string { return r.tr.Route }

// Add appends s, sets its Index and Turn, caps its fields, and returns the index.
// The recorder owns s afterwards: do not change it.
func (r *Recorder) Add(s *Step) int {
	r.capFields(s)
	r.mu.Lock()
	s.Index = r.tr.Len()
	s.Turn = len(r.tr.UserTurns) - 1
	r.tr.Steps = append(r.tr.Steps, s)
	if len(r.tr.Pending) > 0 {
		r.tr.Pending = slices.DeleteFunc(r.tr.Pending, func(p *Step) bool { return p == s })
	}
	r.mu.Unlock()
	return s.Index
}

// Propose judges a step before it runs, atomically with every other
// proposal and record of this trace: under the recorder's lock it sets
// s.Index and s.Turn provisionally, calls judge with the trace so far, and,
// when judge returns true, adds s to Trace.Pending until Add records it. So
// two calls proposed at once are judged one after the other, the second
// seeing the first. judge must not keep t or call back into the recorder;
// a step that was added to Pending must reach Add.
func (r *Recorder) Propose(s *Step, judge func(t *Trace) (run bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Index = r.tr.Len()
	s.Turn = len(r.tr.UserTurns) - 1
	if judge(&r.tr) {
		r.tr.Pending = append(r.tr.Pending, s)
	}
}

// capFields bounds every free-text field of s to the recorder's cap and
// replaces invalid UTF-8, so that what is recorded is what a JSONL round
// trip gives back.
func (r *Recorder) capFields(s *Step) {
	field := func(v *string) {
		if !utf8.ValidString(*v) {
			if v == &s.Args {
				s.InvalidUTF8 = true
			}
			*v = strings.ToValidUTF8(*v, "\uFFFD")
		}
		if r.maxField < 0 {
			return
		}
		var cut bool
		*v, cut = Truncate(*v, r.maxField)
		s.Truncated = s.Truncated || cut
	}
	field(&s.Name)
	field(&s.Args)
	field(&s.Result)
	field(&s.Error)
	for i := range s.Calls {
		field(&s.Calls[i].Name)
		field(&s.Calls[i].Args)
	}
	if f := s.Finding; f != nil {
		f.Texts(field)
	}
}

// UserTurn appends a user message to the trace.
func (r *Recorder) UserTurn(text string) {
	r.mu.Lock()
	r.tr.UserTurns = append(r.tr.UserTurns, text)
	r.mu.Unlock()
}

// UserTurns returns the number of user turns recorded so far.
func (r *Recorder) UserTurns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tr.UserTurns)
}

// SetTools records the tools the agent was offered, replacing earlier ones
// only when specs is not empty.
func (r *Recorder) SetTools(specs []ToolSpec) {
	if len(specs) == 0 {
		return
	}
	r.mu.Lock()
	r.tr.Tools = specs
	r.mu.Unlock()
}

// SetMeta sets one metadata key on the trace.
func (r *Recorder) SetMeta(key, value string) {
	r.mu.Lock()
	if r.tr.Meta == nil {
		r.tr.Meta = make(map[string]string)
	}
	r.tr.Meta[key] = value
	r.mu.Unlock()
}

// View calls fn with the trace so far while holding the recorder's lock.
// fn must not keep t or call back into the recorder.
func (r *Recorder) View(fn func(t *Trace)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.tr)
}

// Release drops from memory the recorded steps whose Index is below n —
// steps a trace store has acknowledged — and what Trace.StepMemo keeps for
// them, for a session that never ends. Numbering stays absolute: later
// steps keep their Index, new ones continue it, and Trace.Released counts
// the steps gone, so Trace returns the segment from there on. Under the
// recorder's lock, before anything is dropped, it calls prepare (when not
// nil) and then every Releaser in the trace's memo, so that indexes built
// from earlier steps take in what they need of them: rules then judge by
// those indexes and by the steps kept. It returns how many steps it
// released; none when n is not above Released.
func (r *Recorder) Release(n int, prepare func(t *Trace)) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.tr
	k := min(n-t.Released, len(t.Steps))
	if k <= 0 {
		return 0
	}
	if prepare != nil {
		prepare(t)
	}
	for _, v := range t.memo {
		if rl, ok := v.(Releaser); ok {
			rl.Release(t, t.Released+k)
		}
	}
	for _, m := range t.stepMemo {
		for _, s := range t.Steps[:k] {
			delete(m, s)
		}
	}
	// The steps kept go into a new array: copies made by Trace share the
	// old one, which must not change under them.
	kept := len(t.Steps) - k
	t.Steps = append(make([]*Step, 0, 2*kept+16), t.Steps[k:]...)
	t.Released += k
	return k
}

// Trace returns a copy of the trace so far, at a cost that does not grow
// with it: the copy's steps, user turns and tools are the recorder's, in
// slices clipped to their length, so appending to them copies, and the
// recorder only appends past them. Read them; do not change their
// elements (recorded steps are never changed).
func (r *Recorder) Trace() *Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tr
	t.UserTurns = slices.Clip(r.tr.UserTurns)
	t.Tools = slices.Clip(r.tr.Tools)
	t.Steps = slices.Clip(r.tr.Steps)
	t.Pending, t.memo, t.stepMemo = nil, nil, nil
	if r.tr.Meta != nil {
		t.Meta = make(map[string]string, len(r.tr.Meta))
		for k, v := range r.tr.Meta {
			t.Meta[k] = v
		}
	}
	return &t
}

// Truncate cuts s to at most max bytes at a rune boundary, appending
// TruncationMarker, and reports whether it cut. A max shorter than the
// marker leaves no room for it: s is cut to max bytes without it. A
// negative max means no cap.
func Truncate(s string, max int) (string, bool) {
	if max < 0 || len(s) <= max {
		return s, false
	}
	marker := TruncationMarker
	if max < len(marker) {
		marker = ""
	}
	cut := max - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker, true
}
