// Package calls holds the rules that judge a tool call by the call alone
// and the count of calls: tool-allow-list (a tool the agent was not
// given), tool-arguments (arguments that break the tool's JSON schema,
// validated by package schema), loop (the n-th identical call in a row)
// and max-steps (more calls in one trace than allowed). They read no
// language and cost a scan of the call's arguments at most.
package calls
