package guard

import (
	"time"
)

// WritesForTest reports whether g's rules take the tool named name for a
// write.
func WritesForTest(g *Guard, name string) bool { return g.tools.Writes(name) }

// SetClockForTest replaces g's clock.
func SetClockForTest(g *Guard, now func() time.Time) { g.now, g.realClock = now, false }
