package memory

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the type of a constraint.
type Kind string

// Constraint kinds. The comment gives the keys the rule-based extractor
// uses and the shape of Value.
const (
	KindAddress     Kind = "address"     // keys delivery, billing, return; Value the address
	KindPhone       Kind = "phone"       // key mobile; Value the number, "+" and digits only
	KindEmail       Kind = "email"       // key email; Value the e-mail address
	KindName        Kind = "name"        // keys name, recipient; Value the name
	KindID          Kind = "id"          // keys order:<id>, account:<id>, tracking:<id>, reservation:<id>; Value the id
	KindTimeRange   Kind = "time_range"  // keys delivery, pickup, call, "<key> hours"; Value a window (see below)
	KindProhibition Kind = "prohibition" // keys sms, call, email, contact, or an action; Value "" or free text, or a window such as "before 09:00"
	KindPreference  Kind = "preference"  // keys channel, time, language, other; Value what is preferred
	KindFact        Kind = "fact"        // key a digest of Value; Value any pinned fact
)

// kinds lists the kinds in the order the card's text shows them.
var kinds = [...]Kind{KindProhibition, KindAddress, KindTimeRange, KindPhone, KindEmail, KindName, KindID, KindPreference, KindFact}

// Known reports whether k is one of the nine kinds.
func (k Kind) Known() bool { return kindRank(k) >= 0 }

func kindRank(k Kind) int {
	for i, x := range kinds {
		if x == k {
			return i
		}
	}
	return -1
}

// State is where a constraint stands on the card.
type State string

// Statuses.
const (
	// Active: the constraint holds. Extractors return active constraints
	// for new statements.
	Active State = "active"
	// Superseded: a later statement on the same kind and key replaced it.
	Superseded State = "superseded"
	// Revoked: the user lifted it ("actually, SMS is fine"). An extractor
	// returns a revoked constraint to lift the active one with the same
	// kind and key.
	Revoked State = "revoked"
)

// Sources of a constraint.
const (
	SourceRule  = "rule"  // found by the rule-based extractor
	SourceModel = "model" // proposed by a model, through LLMExtractor
)

// Limits on a constraint's fields, in bytes.
const (
	MaxKey   = 64
	MaxValue = 512
)

// Constraint is one thing the user said that the agent must respect: a
// typed key and value, the user turn it was stated in, and its status.
//
// Key identifies what the constraint is about within its kind: a later
// active statement with the same Kind and Key supersedes an earlier one.
// Turn is the index of the user turn among the conversation's user
// messages, counted from 0, as trace.Step.Turn indexes Trace.UserTurns.
//
// Time windows, the Value of KindTimeRange and of conditional prohibitions,
// are written "FROM..TO" with either side optional; each side is a date,
// "2025-06-01" or, without a year, "06-01", or a time of day, "09:00".
// "before X" and "after X" are also read, as "..X" and "X..". Both ends are
// inclusive.
type Constraint struct {
	Kind   Kind   `json:"kind"`
	Key    string `json:"key"`
	Value  string `json:"value"`
	Turn   int    `json:"turn"`
	Status State  `json:"status"`
	Source string `json:"source,omitempty"` // SourceRule or SourceModel
	// Ended is the turn in which a superseded or revoked constraint stopped
	// holding; it is 0 for active ones.
	Ended int `json:"ended,omitempty"`
}

// Validate reports whether c is well formed: a known kind and status, a
// key of 1 to MaxKey bytes in lower case, a value of at most MaxValue
// bytes, both valid UTF-8 without control characters, and a turn that is
// not negative. The error wraps ErrInvalid.
func (c Constraint) Validate() error {
	var problem string
	switch {
	case !c.Kind.Known():
		problem = fmt.Sprintf("unknown kind %q", c.Kind)
	case c.Key == "":
		problem = "empty key"
	case len(c.Key) > MaxKey:
		problem = fmt.Sprintf("key longer than %d bytes", MaxKey)
	case !clean(c.Key) || c.Key != strings.ToLower(c.Key) || c.Key != strings.TrimSpace(c.Key):
		problem = fmt.Sprintf("key %q is not lower-case clean text", c.Key)
	case len(c.Value) > MaxValue:
		problem = fmt.Sprintf("value longer than %d bytes", MaxValue)
	case !clean(c.Value):
		problem = "value holds control characters or invalid UTF-8"
	case c.Turn < 0:
		problem = fmt.Sprintf("negative turn %d", c.Turn)
	case c.Status != Active && c.Status != Superseded && c.Status != Revoked:
		problem = fmt.Sprintf("unknown status %q", c.Status)
	case c.Source != "" && c.Source != SourceRule && c.Source != SourceModel:
		problem = fmt.Sprintf("unknown source %q", c.Source)
	case c.Ended < 0:
		problem = fmt.Sprintf("negative end turn %d", c.Ended)
	default:
		return nil
	}
	return &Error{Op: "validate", Err: fmt.Errorf("%w: %s", ErrInvalid, problem)}
}

// clean reports whether s is valid UTF-8 without control characters.
func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// normalize puts an extracted constraint in canonical form: kind and key
// trimmed and lower-cased, channel keys folded by the default lexicon
// ("text" -> "sms"; the card's keys stay as they are), control
// characters turned into spaces, over-long values cut at a rune boundary,
// Turn set to turn and an empty status made Active. Validate decides the
// rest.
func normalize(c Constraint, turn int) Constraint {
	c.Kind = Kind(strings.ToLower(strings.TrimSpace(string(c.Kind))))
	c.Key = strings.ToLower(sanitize(c.Key, MaxKey))
	c.Value = sanitize(c.Value, MaxValue)
	switch {
	case c.Kind == KindProhibition:
		if ch := channelOf(&defaultWords().Memory, c.Key); ch != "" {
			c.Key = ch
		}
	case c.Kind == KindPreference && c.Key == "channel":
		if ch := channelOf(&defaultWords().Memory, c.Value); ch != "" {
			c.Value = ch
		}
	}
	c.Turn = turn
	c.Ended = 0
	if c.Status == "" {
		c.Status = Active
	}
	return c
}

// sanitize turns control characters and runs of spaces into one space,
// trims, and cuts s to at most max bytes at a rune boundary.
func sanitize(s string, max int) string {
	if clean(s) && !strings.Contains(s, "  ") && len(s) <= max && s == strings.TrimSpace(s) {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Error is the error type of package memory.
type Error struct {
	Op  string // "validate", "extract", "decode"
	Err error
}

func (e *Error) Error() string { return "memory: " + e.Op + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalid is wrapped by errors about malformed constraints.
	ErrInvalid = errors.New("invalid constraint")
	// ErrModelOutput is wrapped when a model's answer to LLMExtractor is not
	// the JSON it was asked for, or holds constraints that were rejected.
	ErrModelOutput = errors.New("unusable model output")
)
