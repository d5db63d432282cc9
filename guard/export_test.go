package guard

import (
	"encoding/json"
	"time"
)

// FastValid and DecodeValidate expose the two validation paths to tests.
func FastValid(schema json.RawMessage, args string) bool {
	s, err := compileSchema(schema)
	return err == nil && s.fastValid(args)
}

func DecodeValidate(schema json.RawMessage, args string) error {
	s, err := compileSchema(schema)
	if err != nil {
		return err
	}
	return s.decodeValidate(args)
}

// WritesForTest reports whether g's rules take the tool named name for a
// write.
func WritesForTest(g *Guard, name string) bool { return g.tools.Writes(name) }

// SetClockForTest replaces g's clock.
func SetClockForTest(g *Guard, now func() time.Time) { g.now, g.realClock = now, false }
