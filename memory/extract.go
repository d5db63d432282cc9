package memory

import (
	"context"
	"errors"
)

// Extractor finds the constraints a user turn states. current holds the
// card's active constraints before the turn, so that an extractor can tell
// a revocation ("SMS is fine now") from noise, and must not be modified.
//
// Extract returns new statements as Active constraints and revocations as
// Revoked ones with the kind and key of the constraint they lift; the card
// sets Turn and validates the rest. It may return constraints together with
// an error, as io.Reader returns bytes with one: callers apply what was
// returned and report the error. Implementations must be safe for
// concurrent use.
type Extractor interface {
	Extract(ctx context.Context, turn int, text string, current []Constraint) ([]Constraint, error)
}

// ExtractorFunc adapts a function to the Extractor interface.
type ExtractorFunc func(ctx context.Context, turn int, text string, current []Constraint) ([]Constraint, error)

// Extract calls f.
func (f ExtractorFunc) Extract(ctx context.Context, turn int, text string, current []Constraint) ([]Constraint, error) {
	return f(ctx, turn, text, current)
}

// DiscardExtractor finds nothing: a card observed with it stays as it is.
var DiscardExtractor Extractor = ExtractorFunc(func(context.Context, int, string, []Constraint) ([]Constraint, error) {
	return nil, nil
})

// Combine returns an extractor that runs each of extractors in order and
// merges what they find: a constraint whose kind and key an earlier
// extractor already returned for the turn is dropped, so put the most
// trusted extractor (RuleBased) first. An extractor that fails does not
// lose the others' constraints: they are returned with the errors, joined.
// Combine stops early only when ctx is done.
func Combine(extractors ...Extractor) Extractor {
	return ExtractorFunc(func(ctx context.Context, turn int, text string, current []Constraint) ([]Constraint, error) {
		var out []Constraint
		var errs []error
		type slot struct {
			kind Kind
			key  string
		}
		seen := map[slot]int{} // slot -> index of the extractor that claimed it
		for i, ex := range extractors {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				break
			}
			got, err := ex.Extract(ctx, turn, text, current)
			if err != nil {
				errs = append(errs, err)
			}
			for _, c := range got {
				s := slot{c.Kind, c.Key}
				if by, ok := seen[s]; ok && by != i {
					continue
				}
				seen[s] = i
				out = append(out, c)
			}
		}
		return out, errors.Join(errs...)
	})
}
