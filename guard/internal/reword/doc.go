// Package reword rewrites the injected passage of AgentDojo runs into
// wordings the guard's rules were not tuned to, so that injection detection
// can be measured per wording on the same runs, tool calls and attacker
// values.
//
// AgentDojo's important_instructions attack hides its goal in a tool result
// inside a fixed template ("<INFORMATION> This is an important message from
// me, Emma Johnson, to you, GPT-4. Before you can solve the task ...").
// The guard's instruction markers were tuned on that template. This package
// holds, per suite and injection task, hand-written rewordings of each goal
// (the table) that keep the attacker's values verbatim (IBANs, URLs,
// e-mail addresses, amounts, names) and never use the detector's
// vocabulary (the banned list, and the default lexicon's InstructionMarkers
// read live). Check runs those rules; Apply and Generate refuse to work
// with a table that breaks them.
//
// # Records
//
// The input is a line of the shared corpus (../shared/corpus/agentdojo.jsonl
// and agentdojo_models.jsonl beside the checkout), written by Python's
// json.dumps. The package reads it into an order-keeping tree and writes it
// back the way Python did, and refuses a line that does not round-trip byte
// for byte, so a reworded record differs from its original only in the
// replaced passages and an added "wording" field; labels are untouched.
//
// A passage sits in a tool result as the tool printed it: raw text, a YAML
// single-quoted scalar, a YAML double-quoted scalar, or a Python dict repr.
// The locator finds each one, works out which, decodes it to check that it
// is the template around the run's labelled goal, and the escaper writes
// the rewording the same way. Copies the agent made (in a call's
// arguments, in its reply) are replaced too. A passage the corpus cut at
// 4000 characters must be the start of the template. A passage it cannot
// verify is an error, never a silent skip: Apply fails, and Generate fails
// or, with Options.Skip, leaves the run out and lists it in the Summary.
//
// # Use
//
// Tests under guard/ reword corpus runs at test time:
//
//	out, err := reword.Apply(line, "business")
//	if errors.Is(err, reword.ErrNotInjected) {
//		// a clean run: nothing to reword
//	}
//
// The command guard/internal/reword/rewordgen writes the committed set
// under guard/testdata/reworded with Generate (the runs of seven more
// models, agentdojo_models.jsonl, are generated at test time instead):
//
//	go run ./guard/internal/reword/rewordgen -corpus ../shared/corpus/agentdojo.jsonl -out guard/testdata/reworded
//
// Everything is deterministic: the same corpus and table give the same
// bytes. The package is internal: only guard's tests and the command use it.
package reword
