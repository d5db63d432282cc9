package testkit

import (
	"testing"
	"time"
)

// ReportCPU reports the process's CPU time per operation since since, as
// cpu-ns/op: on a busy shared machine, wall time per operation measures the
// neighbours as much as the code.
func ReportCPU(b *testing.B, since time.Duration) {
	if since > 0 && b.N > 0 {
		b.ReportMetric(float64(ProcessCPU()-since)/float64(b.N), "cpu-ns/op")
	}
}
