// Package schema checks a tool call's arguments against the tool's JSON
// schema: Compile a schema once, then Validate each call's arguments
// against it. It is the guard's one reader of tool arguments; the
// argument rule of package guard reports what Validate returns, and a
// Guard (or a rule) that meets schemas at run time keeps them compiled
// in a Cache of its own.
//
// It is internal: users give schemas through the tools they wrap and the
// policy file, and see Validate's faults in the guard's findings.
//
//	s, err := schema.Compile(tool.Parameters)
//	if err != nil {
//		return err // the schema itself is broken: say so on every call
//	}
//	if err := s.Validate(call.Arguments); err != nil {
//		// err is an *Error: "quantity: want integer, got number"
//	}
//
// # The schema
//
// A schema may use the part of JSON Schema that model providers accept
// for tool parameters: type (a name or a list of names), properties,
// required, enum, items, additionalProperties: false, minimum and
// maximum, minItems and maxItems, and pattern (Go's regexp syntax,
// unanchored). Other keywords are ignored, so a schema never fails to
// compile because of them. A schema whose only property is "__arg1"
// (langchaingo's catch-all string input for plain tools) accepts any
// arguments at all.
//
// Compile reads the schema with encoding/json, as package guard always
// has: its keywords match without regard to case and its compile errors
// read as they did.
//
// # The arguments
//
// The arguments must be the text of one JSON object, in UTF-8, with
// nothing after it but JSON white space. Empty arguments, or arguments of
// white space only, mean {}: providers send "" for a call without
// arguments.
//
// Validate reads them once, as tokens and values of a jsontext.Decoder,
// checking each value against its schema as it is read; it never decodes
// them into Go values. It reads them as encoding/json would, with these
// choices:
//
//   - An object with a name twice is rejected (ErrDuplicateName).
//     encoding/json keeps the last of the two values, other parsers the
//     first; a tool whose parser differs from the guard's would act on a
//     value the guard never checked. Names are compared unquoted, so
//     {"a":1,"\u0061":2} has "a" twice.
//   - An escaped lone surrogate ("\ud800") is read as U+FFFD, as
//     encoding/json reads it; raw invalid UTF-8 is rejected.
//   - A number is an integer when its float64 value is integral (1.0 and
//     1e2 are; 1e400, out of range, is not); minimum and maximum compare
//     its float64 value.
//   - An enum value matches a string exactly, a number by its float64
//     value (1, 1.0 and 1e0 are one value), and an object or array by its
//     canonical JSON (RFC 8785, jsontext.Value.Canonicalize), so neither
//     the order of names nor the spelling of numbers matters.
//   - Nesting is limited to 10000 levels, as in encoding/json.
//
// Package guard's validator (a scanner, then encoding/json) differed in
// three places: it kept the last of two values of one name; it took a
// "]" or "}" after the object for the end of the input; and it compared
// enum numbers by their text, so 1.0 was not 1.
//
// # Which fault
//
// Validate reports one fault, the same one every time:
//
//  1. the text: not UTF-8, not JSON, a name twice, or data after the
//     object; then
//  2. arguments that are not an object; then
//  3. the object against the schema. At each value: its type, its enum,
//     then minimum and maximum, pattern, or minItems and maxItems; then,
//     in an object, the first required name it lacks in the schema's
//     order, else the fault of its smallest name (in byte order) that
//     has one, an unknown name under additionalProperties: false
//     included; in an array, the fault of its first item that has one.
//
// # Performance
//
// Validate allocates nothing for arguments the schema allows, unless a
// name, or a string an enum or pattern constrains, holds an escape. Each
// Schema keeps a pool of decoders and their buffers; a buffer grown past
// 256 KiB for a large call is not kept. On arguments the schema rejects
// it reads on to the end, for a fault of the text comes first, but only
// reads, without checking, the values whose faults could no longer be
// the one reported. BenchmarkValidate compares it with package guard's
// validator on the same arguments.
package schema
