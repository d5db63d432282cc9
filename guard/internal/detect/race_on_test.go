//go:build race

package detect

// raceOn reports whether the tests run under the race detector, whose
// sync.Pool drops what it is given at random, so that pooled readers are
// allocated again.
const raceOn = true
