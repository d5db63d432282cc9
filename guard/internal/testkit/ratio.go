package testkit

import "fmt"

// Ratio is a count out of a total: N of Of.
type Ratio struct{ N, Of int }

// Value is N / Of, or 0 for an empty total.
func (r Ratio) Value() float64 {
	if r.Of == 0 {
		return 0
	}
	return float64(r.N) / float64(r.Of)
}

func (r Ratio) String() string { return fmt.Sprintf("%d/%d (%.0f%%)", r.N, r.Of, 100*r.Value()) }

// Precision is tp / (tp + fp), as a ratio.
func Precision(tp, fp int) Ratio { return Ratio{N: tp, Of: tp + fp} }
