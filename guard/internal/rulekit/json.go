package rulekit

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// AnyKey reports whether some object name in the JSON text s, at any
// depth, satisfies match. It reads s's bytes once without decoding it: in
// valid JSON a name is exactly a string followed, after white space, by a
// colon. On text that is not valid JSON the answer is unspecified, which
// costs a caller that goes on to decode s only that decode.
func AnyKey(s string, match func(key string) bool) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || t[0] != '{' && t[0] != '[' {
		return false // not a JSON object or array: no names
	}
	escaped := false // the string being read holds an escape
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		start := i
		for i++; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				escaped = true
				i++
			}
		}
		if i >= len(s) {
			return false // a string cut short
		}
		end := i
		j := end + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n') {
			j++
		}
		if j == len(s) || s[j] != ':' {
			escaped = false
			continue // a value, not a name
		}
		key := s[start+1 : end] // a substring: no allocation
		if escaped {
			u, err := jsontext.AppendUnquote(nil, s[start:end+1])
			if err != nil {
				return false
			}
			key, escaped = string(u), false
		}
		if match(key) {
			return true
		}
		i = j
	}
	return false
}
