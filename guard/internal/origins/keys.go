package origins

import (
	"sync"
	"sync/atomic"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// The value shapes below are asked of every argument leaf and every field
// of every result, so each checks what its pattern cannot do without
// (an @, a scheme, a leading digit) before it runs the regexp engine.

// keyKind is what the key patterns say of one argument or field name.
type keyKind uint8

const (
	keyDate keyKind = 1 << iota
	keyIdent
	keyContent
)

// keyKinds memoises kindOfKey: tools have few argument names, asked about
// on every call. It stops growing at maxKeyKinds names, so a model that
// invents keys cannot grow it without bound.
var (
	keyKinds    sync.Map // string → keyKind
	keyKindsLen atomic.Int32
)

const maxKeyKinds = 4096

// kindOfKey returns which of dateKey, identKey and contentKey match key.
func kindOfKey(key string) keyKind {
	if k, ok := keyKinds.Load(key); ok {
		return k.(keyKind)
	}
	var k keyKind
	if rulekit.DateKey.MatchString(key) {
		k |= keyDate
	}
	if rulekit.IdentKey.MatchString(key) {
		k |= keyIdent
	}
	if rulekit.ContentKey.MatchString(key) {
		k |= keyContent
	}
	if keyKindsLen.Load() < maxKeyKinds {
		if _, loaded := keyKinds.LoadOrStore(key, k); !loaded {
			keyKindsLen.Add(1)
		}
	}
	return k
}
