package origins

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// NewRelay returns the rule that flags an answer that passes on to the user something found only in
// third-party content the user did not point at: a link, an address, an
// account that no record and no user turn holds ("the full terms are at
// www.example-login.com", when only a message said so). It judges where the answer's specifics came from, not
// how they are worded. The finding is a warning, verdict Allow: the answer
// stands, and the trace and the ledger show what it relayed.
func NewRelay(tools *rulekit.Tools) *Relay { return &Relay{tools} }

// Relay is the untrusted-relay rule.
type Relay struct{ tools *rulekit.Tools }

// Name returns rules.Relay.
func (r *Relay) Name() string { return rules.Relay }

// ToolOnly is false: the rule judges answers.
func (r *Relay) ToolOnly() bool { return false }

// JudgesTool is false: the rule judges no tool call.
func (r *Relay) JudgesTool(string, rulekit.Tool) bool { return false }

// Index brings t's origins index up to date (rulekit.Indexer).
func (r *Relay) Index(t *trace.Trace) { indexOf(t, r.tools) }

// Check judges an answer.
func (r *Relay) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	{
		if s.Kind != trace.KindModel || len(s.Calls) > 0 || s.Result == "" {
			return nil
		}
		for _, v := range specifics(s.Result) {
			os := indexOf(t, r.tools).of(v) // the index only for an answer that names something
			if len(os) == 0 || slices.ContainsFunc(os, func(o origin) bool { return o.kind != fromContent || o.delegated }) {
				continue
			}
			return []trace.Finding{{
				Rule: rules.Relay, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
				Message:  fmt.Sprintf("the answer passes on %q, which only third-party content (%s) holds", v, os[0].tool),
				Evidence: v, Tags: []string{"relay"},
			}}
		}
		return nil
	}
}

// specifics returns what an answer names that could be relayed: links,
// e-mail addresses and account numbers. Names of places and products are
// left out: relaying review text is often what the user asked for, and no
// fact tells a landmark a review mentions from a recommendation planted in
// one.
func specifics(text string) []string {
	if !rulekit.MayHoldSpecific(text) {
		return nil // most answers name no link, address or account
	}
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;()[]<>\"'!?*", r) }) {
		f = strings.TrimRight(f, ".:")
		if rulekit.IsURL(f) || rulekit.IsEmail(f) || rulekit.IsIBAN(f) {
			out = append(out, f)
		}
	}
	return out
}
