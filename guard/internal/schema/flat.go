package schema

import "github.com/go-json-experiment/json/jsontext"

// maxFlatNames is the most names the fast path reads in one object; it
// looks for a duplicate among them by comparing each with those before.
const maxFlatNames = 16

// acceptsFlat is Validate's fast path for the arguments most calls carry:
// one object of at most maxFlatNames names, each holding a string without
// escapes, a number, true, false or null. It reads args, which are valid
// UTF-8, once, byte by byte, and judges each value by the same node.scalar
// the reader does. It only ever accepts: true means the reader would
// return nil; false means it could not tell (a nested value, an escape, a
// fault of any kind, text that is not JSON) and the reader decides, so
// every error still comes from the reader.
func acceptsFlat(root *node, args string) bool {
	if root != nil && !root.free && (root.typed && root.kinds&typeObject == 0 || root.enum != nil || len(root.required) > 64) {
		return false
	}
	i := skipSpace(args, 0)
	if i == len(args) || args[i] != '{' {
		return false
	}
	i = skipSpace(args, i+1)
	var names [maxFlatNames]string
	count := 0
	var seen uint64 // a bit per required name found
	if i < len(args) && args[i] == '}' {
		i++
	} else {
		for {
			// A name, then a colon.
			name, j, ok := flatString(args, i)
			if !ok || count == maxFlatNames {
				return false
			}
			for _, earlier := range names[:count] {
				if earlier == name {
					return false // a duplicate: the reader's fault to report
				}
			}
			names[count] = name
			count++
			i = skipSpace(args, j)
			if i == len(args) || args[i] != ':' {
				return false
			}
			i = skipSpace(args, i+1)
			// The value, judged by the name's schema.
			k, lit, str, j, ok := flatValue(args, i)
			if !ok {
				return false
			}
			if root != nil && !root.free {
				f := root.props[name]
				if f.req > 0 {
					seen |= 1 << (f.req - 1)
				}
				switch {
				case f.node == nil && (f.known || !root.closed), f.known && f.node.free:
				case !f.known:
					return false // an unknown property of a closed object
				default:
					if f.node.scalar(k, lit, str) != allowed {
						return false
					}
				}
			}
			i = skipSpace(args, j)
			if i == len(args) {
				return false
			}
			if args[i] == '}' {
				i++
				break
			}
			if args[i] != ',' {
				return false
			}
			i = skipSpace(args, i+1)
		}
	}
	if skipSpace(args, i) != len(args) {
		return false // trailing data
	}
	if root != nil && !root.free && seen != 1<<len(root.required)-1 {
		return false // a required name is missing
	}
	return true
}

// flatValue reads the scalar value at args[i:]: its kind, a number's
// text, a string's value, and where it ends; ok is false for anything
// else, a composite value or a string with an escape among them.
func flatValue(args string, i int) (k jsontext.Kind, lit, str string, end int, ok bool) {
	if i == len(args) {
		return 0, "", "", 0, false
	}
	switch c := args[i]; {
	case c == '"':
		str, end, ok = flatString(args, i)
		return '"', "", str, end, ok
	case c == '-' || c >= '0' && c <= '9':
		if end, ok = flatNumber(args, i); !ok {
			return 0, "", "", 0, false
		}
		return '0', args[i:end], "", end, true
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(args)-i >= len(w) && args[i:i+len(w)] == w {
			return jsontext.Kind(w[0]), "", "", i + len(w), true
		}
	}
	return 0, "", "", 0, false
}

// flatString reads the string at args[i:] when it holds no escape and no
// control character: its value, a substring of args, and where it ends.
func flatString(args string, i int) (s string, end int, ok bool) {
	if i == len(args) || args[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(args); j++ {
		switch c := args[j]; {
		case c == '"':
			return args[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

// flatNumber reads the number at args[i:] as JSON spells one and returns
// where it ends: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func flatNumber(args string, i int) (end int, ok bool) {
	digits := func(j int) int {
		for j < len(args) && args[j] >= '0' && args[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(args) && args[i] == '-' {
		i++
	}
	switch {
	case i == len(args):
		return 0, false
	case args[i] == '0':
		i++
	case args[i] >= '1' && args[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(args) && args[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(args) && (args[i] == 'e' || args[i] == 'E') {
		i++
		if i < len(args) && (args[i] == '+' || args[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	if i < len(args) && (args[i] >= '0' && args[i] <= '9' || args[i] == '.' || args[i] == 'e' || args[i] == 'E') {
		return 0, false // "01", "1.2.3": the reader says why
	}
	return i, true
}

// skipSpace returns the offset of the first byte at or after i that is
// not JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}
