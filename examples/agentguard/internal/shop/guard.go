package shop

import (
	"sync"

	"github.com/agentguard/agentguard/examples/policies"
	"github.com/agentguard/agentguard/guard"
	guardpolicy "github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/trace"
)

// GuardConfig is the guard configuration the demo agent runs under: its
// policy file, examples/policies/customer-service.yaml (the built-in gates'
// settings, the tools' annotations, the memory card's budget, approval for
// returns, and the domain check that an address changes only while the
// order is pending), read the way "agentguard evaluate -policy" reads it,
// plus what a file cannot hold: the intent classifier, hand-off after a
// tool exception (guard.Gates.DeadEnds), gpt-4o's list prices (USD), the
// ledger and the mode.
func GuardConfig(ledger guard.Sink, shadow bool) guard.Config {
	cfg := policy().Config()
	cfg.Shadow = shadow
	// A tool exception that leaves the user at a dead end is handed to a
	// person.
	cfg.Gates.DeadEnds = trace.Handoff
	cfg.Gates.Classifier = guard.ClassifierFunc(Classify)
	cfg.Observe.Ledger = ledger
	cfg.Observe.Pricing = guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}
	return cfg
}

// PolicyFile is the demo agent's policy file, in examples/policies.
const PolicyFile = "customer-service.yaml"

// policy reads the demo's policy file once; it ships embedded, so a failure
// to read it is a bug in the repository, not an input error.
var policy = sync.OnceValue(func() *guardpolicy.Policy {
	data, err := policies.FS.ReadFile(PolicyFile)
	if err != nil {
		panic(err)
	}
	p, err := guardpolicy.Read(PolicyFile, data)
	if err != nil {
		panic(err)
	}
	return p
})
