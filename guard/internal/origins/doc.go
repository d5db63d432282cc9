// Package origins keeps, per trace, where every value that entered it
// came from — a user turn, the memory card, a structured field of a tool
// result (a record), or third-party text in a tool result (content) — and
// holds the rules that judge by it: argument-provenance (an id from
// nowhere; content about one entity sent to another), injected-argument
// (an identifying argument whose only origin is third-party content) and
// untrusted-relay (an answer that passes on a link or account only
// third-party content holds). Rules ask which origins a value has, never
// how the text around it is worded.
//
// The index is built once per step, incrementally, in the trace's memo; a
// check costs O(the call's arguments), and a session that releases steps
// keeps the index bounded by the distinct values it saw (originsrelease.go).
package origins
