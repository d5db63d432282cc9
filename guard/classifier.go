package guard

import (
	"context"

	"github.com/agentguard/agentguard/trace"
)

// Intent is what a Classifier makes of a user turn.
type Intent struct {
	Label      string
	Confidence float64
	// Alternatives are the next most likely labels, best first; the intent
	// gate offers them in its clarifying question.
	Alternatives []string
}

// Classifier names the intent of a user turn. It may call a model; its
// result is recorded as a model step named "intent".
type Classifier interface {
	Classify(ctx context.Context, text string) (Intent, error)
}

// ClassifierFunc adapts a function to the Classifier interface.
type ClassifierFunc func(ctx context.Context, text string) (Intent, error)

// Classify calls f.
func (f ClassifierFunc) Classify(ctx context.Context, text string) (Intent, error) {
	return f(ctx, text)
}

// classify runs the classifier on the latest user turn and judges the
// result. It returns a terminal verdict's finding when the flow must stop.
func (g *Guard) classify(ctx context.Context, rec *trace.Recorder, text string) (trace.Verdict, trace.Finding, []trace.Finding) {
	s := &trace.Step{Kind: trace.KindModel, Name: "intent", Args: text, Start: g.now()}
	in, err := g.cfg.Gates.Classifier.Classify(ctx, text)
	s.Duration = g.now().Sub(s.Start)
	if err != nil {
		s.Error = err.Error()
		g.observed(ctx, rec, s, nil, g.commit(ctx, rec, s, nil))
		return trace.Allow, trace.Finding{}, nil
	}
	s.Intent, s.Confidence, s.Alternatives, s.Result = in.Label, in.Confidence, in.Alternatives, in.Label
	findings, v := g.judge(rec, s)
	g.observed(ctx, rec, s, findings, g.commit(ctx, rec, s, findings))
	if terminal(v) || v == trace.Block {
		return v, strongest(findings, v), findings
	}
	return trace.Allow, trace.Finding{}, findings
}
