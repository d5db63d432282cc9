package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace"
)

// Category says what kind of input a case is.
type Category string

// Categories.
const (
	Normal      Category = "normal"      // the requests the agent exists for, plainly put
	Boundary    Category = "boundary"    // vague wording, several facts in one message, very long input, rare terms
	Adversarial Category = "adversarial" // leading questions, negations, repeated pushing, conditions changed mid-conversation
)

// Case is one golden case: a conversation to replay and what a healthy
// agent does with it. Its JSON form is one line of a golden set; the
// package documentation describes every key.
type Case struct {
	ID string `json:"id"`
	// Category is the kind of input; "" reads as Normal.
	Category Category `json:"category,omitempty"`
	Title    string   `json:"title,omitempty"`
	// Route is the trace's route (Trace.Route), for rules that depend on it.
	Route string `json:"route,omitempty"`
	// Turns are the user's messages, sent one after the other.
	Turns []string `json:"turns"`
	// Intent is the intent the agent's classifier should give the turn
	// IntentTurn (0-based; negative counts from the end, -1 is the last).
	Intent     string `json:"intent,omitempty"`
	IntentTurn int    `json:"intent_turn,omitempty"`
	// Trajectory is the tool calls the agent should make over the whole
	// conversation; nil means they are not checked.
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// Answer is the baseline answer: what the final answer must and must
	// not say. Absent means nothing is checked of it.
	Answer Answer `json:"answer"`
	// Tracks, when set, are the baseline's two tracks (expert and agent);
	// the elements they agree on join Answer as the reference (see
	// Reference and CrossCheck).
	Tracks *Tracks `json:"tracks,omitempty"`
	// Constraints are what the user states and the agent must keep
	// respecting in the turns that follow.
	Constraints []Constraint `json:"constraints,omitempty"`
	// MaxToolCalls is the tool-call budget of one run; zero means twice
	// the length of Trajectory (no budget without one).
	MaxToolCalls int      `json:"max_tool_calls,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	// LastVerified is the date, YYYY-MM-DD, on which a person last checked
	// that the baseline is still right; "" means never, and Stale lists
	// the case.
	LastVerified string `json:"last_verified,omitempty"`
}

// Trajectory is an expected sequence of tool calls and how to compare it
// (TrajectoryMatch does the comparison).
type Trajectory struct {
	Match TrajectoryMode `json:"match,omitempty"` // strict (default), unordered, subset, superset
	Args  ArgMode        `json:"args,omitempty"`  // exact (default), ignore, subset, superset
	// Overrides sets the argument mode per tool.
	Overrides map[string]ArgMode `json:"overrides,omitempty"`
	Calls     []Call             `json:"calls"`
}

// Call is one expected tool call.
type Call struct {
	Name string `json:"name"`
	// Args are the expected arguments, a JSON object; absent means {}.
	Args json.RawMessage `json:"args,omitempty"`
}

// Answer holds the key elements of the baseline answer. An element is
// text that must occur in the final answer, compared without regard to
// case or runs of white space; "a|b" is satisfied by either alternative.
type Answer struct {
	Must    []string `json:"must,omitempty"`
	MustNot []string `json:"must_not,omitempty"`
	// Text is a reference answer for people and judges; it is not compared.
	Text string `json:"text,omitempty"`
	// Declines marks a baseline that declines: it refuses, says it does
	// not know, or hands the user to a person. A run of a case without it
	// that ends refused or handed off is an over-refusal.
	Declines bool `json:"declines,omitempty"`
}

// Constraint is something the user states in turn Turn that must hold from
// then on. Exactly one kind is set:
//
//   - NoTool: the tool must not run;
//   - Tool, Arg and Value: every call of Tool must pass an argument Arg
//     that contains Value (compared as Answer elements are);
//   - AnswerNot: no answer may contain any of these elements.
//
// Each call or answer that breaks it is one loss.
type Constraint struct {
	ID        string   `json:"id"`
	Turn      int      `json:"turn"`
	Text      string   `json:"text,omitempty"` // what the user said, for people
	NoTool    string   `json:"no_tool,omitempty"`
	Tool      string   `json:"tool,omitempty"`
	Arg       string   `json:"arg,omitempty"`
	Value     string   `json:"value,omitempty"`
	AnswerNot []string `json:"answer_not,omitempty"`
}

// DateLayout is the layout of Case.LastVerified.
const DateLayout = "2006-01-02"

// MaxLine is the longest line, in bytes, LoadCases accepts.
const MaxLine = 1 << 20

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Validate reports what is wrong with c, as an error wrapping ErrInvalid.
func (c *Case) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, err)
	}
	return nil
}

func (c *Case) validate() error {
	switch {
	case c.ID == "":
		return errors.New(`missing "id"`)
	case !idPattern.MatchString(c.ID):
		return fmt.Errorf("id %q: want 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", c.ID)
	case c.Category != "" && c.Category != Normal && c.Category != Boundary && c.Category != Adversarial:
		return fmt.Errorf("category %q: want normal, boundary or adversarial", c.Category)
	case len(c.Turns) == 0:
		return errors.New(`"turns" is empty`)
	case c.IntentTurn >= len(c.Turns) || c.IntentTurn < -len(c.Turns):
		return fmt.Errorf("intent_turn %d: the case has %d turns", c.IntentTurn, len(c.Turns))
	case c.MaxToolCalls < 0:
		return fmt.Errorf("max_tool_calls %d is negative", c.MaxToolCalls)
	}
	for i, t := range c.Turns {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("turn %d is blank", i)
		}
	}
	if c.Trajectory != nil {
		if err := c.Trajectory.validate(); err != nil {
			return fmt.Errorf("trajectory: %w", err)
		}
	}
	if err := elements("answer.must", c.Answer.Must); err != nil {
		return err
	}
	if err := elements("answer.must_not", c.Answer.MustNot); err != nil {
		return err
	}
	if t := c.Tracks; t != nil {
		for key, els := range map[string][]string{"tracks.expert.must": t.Expert.Must, "tracks.expert.must_not": t.Expert.MustNot, "tracks.agent.must": t.Agent.Must, "tracks.agent.must_not": t.Agent.MustNot} {
			if err := elements(key, els); err != nil {
				return err
			}
		}
	}
	seen := map[string]bool{}
	for i, k := range c.Constraints {
		if err := k.validate(len(c.Turns)); err != nil {
			return fmt.Errorf("constraint %d: %w", i, err)
		}
		if seen[k.ID] {
			return fmt.Errorf("constraint %d: duplicate id %q", i, k.ID)
		}
		seen[k.ID] = true
	}
	for i, t := range c.Tags {
		if strings.TrimSpace(t) == "" || strings.ContainsAny(t, " \t\n") {
			return fmt.Errorf("tag %d %q: want a word without spaces", i, t)
		}
	}
	if c.LastVerified == "" {
		return nil // never verified: Stale lists it
	}
	if _, err := time.Parse(DateLayout, c.LastVerified); err != nil {
		return fmt.Errorf("last_verified %q: want YYYY-MM-DD", c.LastVerified)
	}
	return nil
}

func elements(key string, els []string) error {
	for i, e := range els {
		for _, alt := range strings.Split(e, "|") {
			if strings.TrimSpace(alt) == "" {
				return fmt.Errorf("%s[%d] %q has an empty alternative", key, i, e)
			}
		}
	}
	return nil
}

func (t *Trajectory) validate() error {
	switch t.Match {
	case "", TrajectoryStrict, TrajectoryUnordered, TrajectorySubset, TrajectorySuperset:
	default:
		return fmt.Errorf("match %q: want strict, unordered, subset or superset", t.Match)
	}
	if err := argMode("args", t.Args); err != nil {
		return err
	}
	for tool, m := range t.Overrides {
		if err := argMode("overrides."+tool, m); err != nil {
			return err
		}
	}
	for i, c := range t.Calls {
		if c.Name == "" {
			return fmt.Errorf("call %d has no name", i)
		}
		if len(c.Args) > 0 {
			var m map[string]any
			if json.Unmarshal(c.Args, &m) != nil || m == nil {
				return fmt.Errorf("call %d (%s): args must be a JSON object", i, c.Name)
			}
		}
	}
	return nil
}

func argMode(key string, m ArgMode) error {
	switch m {
	case "", ArgsExact, ArgsIgnore, ArgsSubset, ArgsSuperset:
		return nil
	}
	return fmt.Errorf("%s %q: want exact, ignore, subset or superset", key, m)
}

func (k *Constraint) validate(turns int) error {
	if k.ID == "" {
		return errors.New(`missing "id"`)
	}
	if k.Turn < 0 || k.Turn >= turns {
		return fmt.Errorf("%s: turn %d: the case has %d turns", k.ID, k.Turn, turns)
	}
	kinds := 0
	if k.NoTool != "" {
		kinds++
	}
	if k.Tool != "" || k.Arg != "" || k.Value != "" {
		kinds++
		if k.Tool == "" || k.Arg == "" || k.Value == "" {
			return fmt.Errorf(`%s: "tool", "arg" and "value" go together`, k.ID)
		}
	}
	if len(k.AnswerNot) > 0 {
		kinds++
		if err := elements(k.ID+": answer_not", k.AnswerNot); err != nil {
			return err
		}
	}
	if kinds != 1 {
		return fmt.Errorf(`%s: set exactly one of "no_tool", "tool"/"arg"/"value" and "answer_not"`, k.ID)
	}
	return nil
}

// LoadCases reads a golden set: one case per line as JSON (see the package
// documentation), blank lines skipped. Keys a Case does not have are
// errors, so that a misspelt key cannot silently disable a check. It
// returns the cases that are valid, in order, and an error joining one
// *Error per rejected line (a malformed case, or an id seen before), or
// nil. source names the input in errors.
func LoadCases(r io.Reader, source string) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var cases []Case
	var errs []error
	seen := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		if len(b) == 0 {
			continue
		}
		c, err := decodeCase(b)
		if err == nil {
			if first, ok := seen[c.ID]; ok {
				err = fmt.Errorf("%w: id %q is already used on line %d", ErrDuplicate, c.ID, first)
			}
		}
		if err != nil {
			errs = append(errs, &Error{Source: source, Line: line, Case: c.ID, Err: err})
			continue
		}
		seen[c.ID] = line
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: line longer than %d bytes", ErrInvalid, MaxLine)
		}
		errs = append(errs, &Error{Source: source, Line: line + 1, Err: err})
	}
	return cases, errors.Join(errs...)
}

func decodeCase(b []byte) (Case, error) {
	var c Case
	if !utf8.Valid(b) {
		return c, fmt.Errorf("%w: not UTF-8", ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Case{ID: c.ID}, fmt.Errorf("%w: %v", ErrInvalid, jsonReason(err))
	}
	if dec.More() {
		return Case{ID: c.ID}, fmt.Errorf("%w: more than one JSON value on the line", ErrInvalid)
	}
	// encoding/json keeps the last of two equal keys: a second "turns"
	// would silently replace the first.
	if err := trace.UniqueKeys(b); err != nil {
		return Case{ID: c.ID}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := c.Validate(); err != nil {
		return Case{ID: c.ID}, err
	}
	if c.Category == "" {
		c.Category = Normal
	}
	return c, nil
}

// jsonReason words encoding/json's errors for people editing a golden set.
func jsonReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("key %q: got JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return fmt.Sprintf("got JSON %s, want an object", te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON: " + se.Error()
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: the line ends inside a value"
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return "unknown key " + strings.TrimPrefix(msg, "json: unknown field ")
	}
	return err.Error()
}

// WriteCase writes c to w as one line of a golden set, in the form
// LoadCases reads. It writes nothing and returns an error wrapping
// ErrInvalid when c is not valid.
func WriteCase(w io.Writer, c Case) error {
	if err := c.Validate(); err != nil {
		return &Error{Case: c.ID, Err: err}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return &Error{Case: c.ID, Err: err}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return &Error{Case: c.ID, Err: err}
	}
	return nil
}
