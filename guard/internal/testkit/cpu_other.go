//go:build !unix

package testkit

import "time"

// ProcessCPU is not measured here; benchmarks report no cpu-ns/op.
func ProcessCPU() time.Duration { return 0 }
