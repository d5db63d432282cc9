//go:build !race

package testkit

// RaceOn reports whether the tests run under the race detector.
const RaceOn = false
