// Package guard puts guard rails inside an agent's tool-calling loop.
//
// A Guard holds rules and a ledger sink. It plugs into an agent in one of
// three ways, all sharing the same rules and recording into the same trace:
//
//   - WrapModel returns an llms.Model: each model turn is recorded and its
//     answer judged; a terminal verdict replaces the answer.
//   - WrapTool returns a tools.Tool: each call is judged before it runs,
//     recorded with its result, and a panic in the tool is recovered.
//   - Run drives the loop itself over []llms.MessageContent with
//     llms.WithTools, and can pause for a human (Resume).
//
// The wrappers return what they wrap, so an existing loop or langchaingo's
// agents.Executor keeps working unmodified.
//
// # Rules and verdicts
//
// A Rule is a pure function of the trace so far and a proposed step. Online
// a tool step is judged before the tool runs and a model step after the
// model answered; offline, Evaluate judges every step of a recorded trace
// against the steps before it, so the same rules give the same findings in
// both places. Each finding carries a verdict; the strongest wins:
//
//	verdict  tool step (Run)                       tool step (WrapTool)     model step
//	allow    the tool runs                         the tool runs            the answer stands
//	retry    not run; the model is told to fix it  same, as an observation  asked again (Config.MaxRetries), then refuse
//	block    not run; the model is told why        same, as an observation  refusal template
//	clarify  not run; Run ends asking the question *Interrupt error         answer replaced by the question
//	refuse   not run; Run ends with the refusal    *Interrupt error         refusal template
//	handoff  not run; Run ends, a human takes over *Interrupt error         handoff message
//
// Whatever the verdict, every tool call the model made gets exactly one
// tool-result message in Run's conversation, so it stays valid for any
// provider. Observations go back with a nil error because agents.Executor
// aborts on tool errors. In shadow mode (Config.Shadow) every rule runs and
// every finding is recorded, but nothing is enforced.
//
// Built-in rules: AllowList, LoopLimit, MaxSteps and ValidArguments, tuned
// by Config; Config.Rules adds your own.
//
// # Traces and the ledger
//
// Steps go into the trace carried by the context (StartTrace), as
// trace.Step values: model turns, tool calls, and one gate step per finding.
// Each finding is also sent to Config.Ledger, which the ledger package
// implements on badger; guard itself never imports badger.
//
// # Example
//
//	g := guard.New(guard.Config{Ledger: led})
//	ctx, rec := g.StartTrace(ctx, sessionID, "after-sales")
//	res, err := g.Run(ctx, model, []tools.Tool{queryOrder, submitReturn}, msgs)
//	// res.Status, res.Answer, res.Messages; rec.Trace() is the trace.
package guard
