// Package policy reads a policy file: one YAML or JSON file for everything
// the guard, continuous evaluation (guard/conteval) and the health check
// (guard/health) read about an agent that is not code. Its keys are
// guard.Config's, with the same names and nesting (gates.loop_limit is
// Config.Gates.LoopLimit); besides them a file holds domain checks
// written in CEL over the records the agent fetched earlier in the trace,
// the assertions of continuous evaluation and the health weights.
// policy.md, beside this file, lists every key.
//
// It is the one package that links cel-go and YAML: a program that imports
// guard alone links neither.
//
//	p, err := policy.Open("agent.yaml")
//	if err != nil {
//		log.Fatal(err) // policy: agent.yaml:12:7: tools.send_email: unknown field "efect" (did you mean "effect"?)
//	}
//	cfg := p.Config()
//	cfg.Observe.Ledger = led // what a file cannot hold
//	g := guard.New(cfg)
//
// The checks run as one rule, rules.PolicyChecks, online and offline
// alike; each finding carries its check's name. Their lookups read an
// index kept in the trace's memo, so their cost does not grow with the
// session.
package policy
