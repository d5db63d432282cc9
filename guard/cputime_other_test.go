//go:build !unix

package guard_test

import "time"

// processCPU is not measured here; benchmarks report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
