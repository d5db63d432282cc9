// Package judge is the one protocol of the LLM judges that guard/health
// and guard/conteval ask for a second opinion: a score from 1 to 5 on
// anchors each use names, with a short reason, as exactly one JSON object.
//
// # The protocol
//
// A [Rubric] holds what varies between uses — what the judge reviews, what
// its prompt gives it, and what each score means — and builds the system
// prompt ([Rubric.System]) around them: the instructions, the task, the five
// anchors from 5 down to 1, and the one reply format ([Format]). The user
// message is the use's own rendering of what is judged, ending with
// [Reminder].
//
// [Call] makes one call of the model: at temperature 0 in JSON mode, under
// a timeout, a panic turned into an error. It counts the tokens the
// provider reported (detect.Usage) or, where it did not, estimates them
// with trace.EstimateTokens over the prompt's and the answer's text, and
// prices them with the caller's cost function (guard.Pricing.Cost fits). A
// failed call counts no tokens and costs nothing.
//
// [ParseRating] holds an answer to the format: exactly one JSON object with
// an integer "score" from 1 to 5 and a non-empty "reason", nothing else but
// white space and one Markdown code fence. [Ask] is Call then ParseRating.
//
// What a score means for a report — health's judged outcomes, conteval's
// pass threshold — stays with each use.
//
// It is internal so that the protocol is not part of guard's public API.
// It imports neither guard nor its offline packages (costs come in as a
// function), so any package under guard may use it. Everything in it is
// safe for concurrent use.
//
// # Example
//
//	rubric := judge.Rubric{Intro: "You review …", Task: "Score the run from 1 to 5:", Anchors: anchors}
//	r, u, err := judge.Ask(ctx, model, rubric, prompt+"\n"+judge.Reminder, judge.Options{Cost: pricing.Cost})
//	// u.Cost is what the call cost, whatever err says
package judge
