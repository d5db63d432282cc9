//go:build !race

package guard_test

// raceOn reports whether the tests run under the race detector, whose
// instrumentation makes heap figures and run times not the program's own.
const raceOn = false
