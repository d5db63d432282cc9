package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// FactKind says what a Fact is about.
type FactKind string

// The kinds of fact a finding rests on.
const (
	// FactArgument is an argument of the judged call: Where is its path,
	// Text its value.
	FactArgument FactKind = "argument"
	// FactOrigin is where a value came from: a tool result's field (Step,
	// Where), a user turn (Turn) or the memory card; Says what kind of
	// origin it is ("third-party text", "record field").
	FactOrigin FactKind = "origin"
	// FactAbsent is something looked for and not found: no origin of a
	// value, no request for a call, no result behind a claim.
	FactAbsent FactKind = "absent"
	// FactUser is what the user said: Turn, and the words in Text.
	FactUser FactKind = "user"
	// FactResult is a tool result: Step, the tool in Where, the result in
	// Text.
	FactResult FactKind = "result"
	// FactAnswer is words of the model's answer.
	FactAnswer FactKind = "answer"
	// FactCall is another call of the trace: Step, the tool in Where, and
	// what became of it in Says ("failed", "blocked", "never ran").
	FactCall FactKind = "call"
	// FactPolicy is the setting or policy the finding applies: Where names
	// it, Text holds its value.
	FactPolicy FactKind = "policy"
	// FactCard is a constraint on the memory card: Where its kind, Text
	// its value, Turn the user turn that set it.
	FactCard FactKind = "card"
)

// Fact is one fact of a trace that a finding rests on.
type Fact struct {
	Kind FactKind `json:"kind"`
	// Step is the index of the step the fact is read from; -1 when it is
	// read from a user turn or the memory card, or from the trace as a
	// whole.
	Step int `json:"step"`
	// Turn is the user turn, for facts about the user's words.
	Turn int `json:"turn,omitempty"`
	// Where names the place: an argument path, a result field, a tool.
	Where string `json:"where,omitempty"`
	// Text is what is there, size-bounded (MaxFactText).
	Text string `json:"text,omitempty"`
	// Says is what the fact shows, in a few words.
	Says string `json:"says,omitempty"`
}

// MaxFactText bounds a fact's Text, in bytes; rules cut longer text with
// TruncationMarker.
const MaxFactText = 240

// String renders the fact on one line, as Explain lists it:
//
//	step 2 read_inbox [0].body: "New bank details: …" (third-party text)
func (f Fact) String() string {
	var b strings.Builder
	switch {
	case f.Kind == FactUser || f.Kind == FactCard && f.Step < 0:
		b.WriteString("user turn " + strconv.Itoa(f.Turn))
	case f.Step >= 0:
		b.WriteString("step " + strconv.Itoa(f.Step))
	default:
		b.WriteString("trace")
	}
	b.WriteString(" " + string(f.Kind))
	if f.Where != "" {
		b.WriteString(" " + f.Where)
	}
	if f.Text != "" {
		fmt.Fprintf(&b, ": %q", f.Text)
	}
	if f.Says != "" {
		b.WriteString(" (" + f.Says + ")")
	}
	return b.String()
}

// Explain renders the finding for a reviewer: what was decided on which
// step (and, for an imported trace, which message of the input) and why,
// then each fact it rests on, one per line.
func (f *Finding) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d", f.Step)
	if f.Source != "" {
		b.WriteString(" (" + f.Source + " of the input)")
	}
	fmt.Fprintf(&b, ": %s %s (%s): %s", f.Rule, f.Verdict, f.Severity, f.Message)
	if f.Shadow {
		b.WriteString(" [shadow: not enforced]")
	}
	for _, fact := range f.Facts {
		b.WriteString("\n  - " + fact.String())
	}
	if len(f.Facts) == 0 && f.Evidence != "" {
		fmt.Fprintf(&b, "\n  - evidence: %q", f.Evidence)
	}
	return b.String()
}

// Texts calls do with each free-text field of the finding — message,
// question, evidence and every fact's text, place and reading — so that whatever caps or
// redacts a finding's text reaches all of it. The facts are copied first:
// a finding's facts may be shared with the rule that made them.
func (f *Finding) Texts(do func(*string)) {
	do(&f.Message)
	do(&f.Question)
	do(&f.Evidence)
	if len(f.Facts) > 0 {
		f.Facts = append([]Fact(nil), f.Facts...)
		for i := range f.Facts {
			do(&f.Facts[i].Text)
			do(&f.Facts[i].Where)
			do(&f.Facts[i].Says) // "sends content to +86 137 0000 1003" names the value too
		}
	}
}
