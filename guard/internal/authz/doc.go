// Package authz holds the rules of who authorized a consequential call:
// write-authorization (a write no request of the user's asks for: a
// destructive one, or, for an agent given a task, any) and confirmation (a
// write that needs the user's explicit yes first). They read the user's
// turns and the agent's own messages — and, for an agent given a task,
// the content the user handed the task to — never other content the agent
// read, with the guard's lexicon (Actions, Authority, Affirmation).
//
// Write-authorization reads each user turn once into its requests (asks.go:
// the verb of each clause, the family of action it asks for, what it acts
// on, how many), keeps them in the trace's memo with the count of calls of
// each tool (index.go), and judges a write against them (authorize.go): no
// request for its action is a Block; a request for it on things of another
// kind, or fewer requests than calls of the tool, a warning.
package authz
