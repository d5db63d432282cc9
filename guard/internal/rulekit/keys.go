package rulekit

import (
	"maps"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// KeyKind says what an argument or result field name names, by the
// lexicon's Keys; a name may be of several kinds.
type KeyKind uint8

// Kinds of names.
const (
	KeyIdentifying KeyKind = 1 << iota
	KeyContent
	KeyDate
	KeyAmount
	KeyDestination
	KeyTarget
)

// keyKinds memoises KindOfKey per compiled lexicon: tools have few
// argument names, asked about on every call. The map is copied on write
// and read without a lock; it stops growing at maxKeyKinds names, so a
// model that invents keys cannot grow it without bound, and past it a name
// is read afresh.
type keyKinds struct {
	m  atomic.Pointer[map[string]KeyKind]
	mu sync.Mutex
}

type keyKindsKey struct{}

const maxKeyKinds = 4096

// KindOfKey returns what w's Keys say of the name key.
func KindOfKey(w *lexicon.Compiled, key string) KeyKind {
	kk := w.Derived(keyKindsKey{}, func() any { return new(keyKinds) }).(*keyKinds)
	if m := kk.m.Load(); m != nil {
		if k, ok := (*m)[key]; ok {
			return k
		}
	}
	var k KeyKind
	for _, p := range [...]struct {
		kind KeyKind
		re   *regexp.Regexp
	}{
		{KeyIdentifying, w.Keys.Identifying}, {KeyContent, w.Keys.Content}, {KeyDate, w.Keys.Date},
		{KeyAmount, w.Keys.Amount}, {KeyDestination, w.Keys.Destination}, {KeyTarget, w.Keys.Target},
	} {
		if w.MayMatch(p.re, key) && p.re.MatchString(key) {
			k |= p.kind
		}
	}
	kk.mu.Lock()
	defer kk.mu.Unlock()
	old := kk.m.Load()
	if old != nil && len(*old) >= maxKeyKinds {
		return k
	}
	m := make(map[string]KeyKind, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[key] = k
	kk.m.Store(&m)
	return k
}
