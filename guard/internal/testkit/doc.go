// Package testkit is what the guard's tests and benchmarks share and no
// user needs: the public corpus beside the checkout read into traces, and
// the process's CPU time for benchmarks on a shared machine. It is
// imported by tests only.
package testkit
