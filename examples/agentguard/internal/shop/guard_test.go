package shop

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// TestGuardConfigFromThePolicyFile: the demo runs under its policy file,
// whose intents are the classifier's, plus what a file cannot hold.
func TestGuardConfigFromThePolicyFile(t *testing.T) {
	cfg := GuardConfig(nil, false)
	if !slices.Equal(cfg.Gates.Intents, Intents) {
		t.Errorf("intents %v, want the classifier's %v", cfg.Gates.Intents, Intents)
	}
	if cfg.Gates.Classifier == nil || len(cfg.Rules) < 1 || cfg.Gates.DeadEnds != trace.Handoff {
		t.Errorf("classifier %v, %d rules, dead ends %q: want the classifier, the file's checks and hand-off at a dead end", cfg.Gates.Classifier, len(cfg.Rules), cfg.Gates.DeadEnds)
	}
	if !cfg.Tools["update_address"].Confirm || !cfg.Tools["search_kb"].Retrieval || !slices.Equal(cfg.Gates.RequireApproval, []string{"submit_return"}) {
		t.Errorf("tools %+v, approval %v: not the file's", cfg.Tools, cfg.Gates.RequireApproval)
	}
}
