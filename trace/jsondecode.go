package trace

import (
	"encoding/json"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// unmarshal is encoding/json's Unmarshal, run first by go-json-experiment's
// implementation of the same semantics (what encoding/json becomes with
// GOEXPERIMENT=jsonv2), about 1.5× faster on recorded traces. On failure
// the input is decoded again by encoding/json, so that an error is exactly
// the one encoding/json gives — the same text, the same types for
// errors.As — and costs nothing on the lines that decode.
// FuzzUnmarshalAsEncodingJSON holds the two to the same values.
func unmarshal[T any](data []byte, v *T) error {
	if jsonv1.Unmarshal(data, v) == nil {
		return nil
	}
	*v = *new(T)
	return json.Unmarshal(data, v)
}
