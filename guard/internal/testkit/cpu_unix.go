//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has used, user and system: on a
// shared machine, where wall time per operation depends on the neighbours,
// it is the steadier measure (run with -cpu 1 so that one thread does the
// work and the garbage collector's share is counted once).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
