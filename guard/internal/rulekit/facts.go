package rulekit

import (
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// The facts a finding rests on (trace.Fact), made the same way by every
// rule: text clipped to trace.MaxFactText, places named as a reviewer
// reads them.

// ArgFact is the argument at path of the judged call s, with value v.
func ArgFact(s *trace.Step, path, v string) trace.Fact {
	return trace.Fact{Kind: trace.FactArgument, Step: s.Index, Where: join(s.Name, path), Text: FactText(v)}
}

// CallFact is the call s, its arguments as text, and what it shows.
func CallFact(s *trace.Step, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactCall, Step: s.Index, Where: s.Name, Text: FactText(s.Args), Says: says}
}

// ResultFact is the result of step s, or its field at path, with text,
// and what it shows.
func ResultFact(s *trace.Step, path, text, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactResult, Step: s.Index, Where: join(s.Name, path), Text: FactText(text), Says: says}
}

// OriginFact is where a value came from: the field at path of step s's
// result, and what kind of origin it is.
func OriginFact(s *trace.Step, path, text, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactOrigin, Step: s.Index, Where: join(s.Name, path), Text: FactText(text), Says: says}
}

// UserFact is user turn i of t and what it shows.
func UserFact(t *trace.Trace, i int, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactUser, Step: -1, Turn: i, Text: FactText(UserTurn(t, i)), Says: says}
}

// AnswerFact is words of the model's answer at step s.
func AnswerFact(s *trace.Step, text, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactAnswer, Step: s.Index, Text: FactText(text), Says: says}
}

// AbsentFact is something looked for and not found: what (where) and
// where it was looked for (says).
func AbsentFact(where, text, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactAbsent, Step: -1, Where: where, Text: FactText(text), Says: says}
}

// PolicyFact is the setting the finding applies, and its value.
func PolicyFact(where, value string) trace.Fact {
	return trace.Fact{Kind: trace.FactPolicy, Step: -1, Where: where, Text: FactText(value)}
}

// FactText clips s to trace.MaxFactText bytes.
func FactText(s string) string {
	return Clip(strings.TrimSpace(s), trace.MaxFactText)
}

func join(name, path string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	}
	return name + " " + path
}
