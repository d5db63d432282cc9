package jsonschema

import "encoding/json"

// FastValid and DecodeValidate expose the two validation paths to tests.
func FastValid(schema json.RawMessage, args string) bool {
	s, err := Compile(schema)
	return err == nil && s.fastValid(args)
}

func DecodeValidate(schema json.RawMessage, args string) error {
	s, err := Compile(schema)
	if err != nil {
		return err
	}
	return s.decodeValidate(args)
}
