// Package authz holds the rules of who authorized a consequential call:
// write-authorization (a destructive write the user did not ask for, or,
// for an agent given a task, a write the task does not name) and
// confirmation (a write that needs the user's explicit yes first). They
// read the user's turns and the agent's own messages, never the content
// the agent read, with the guard's lexicon (Authority, Affirmation).
package authz
