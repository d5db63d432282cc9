package claims

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/go-json-experiment/json/jsontext"
)

// argFactsDecoded is argFacts as it was, decoding the arguments into a
// map and each value of interest again: the reference the reader is held
// to.
func argFactsDecoded(w *lexicon.Compiled, args string) (targets, dest []string) {
	if !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return nil, nil
	}
	for k, raw := range m {
		kind := rulekit.KindOfKey(w, strings.ToLower(k))
		isTarget, isDest := kind&rulekit.KeyTarget != 0, kind&rulekit.KeyDestination != 0
		if !isTarget && !isDest {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		for _, x := range list {
			var s string
			switch x := x.(type) {
			case string:
				s = x
			case float64:
				s = strconv.FormatFloat(x, 'f', -1, 64)
			default:
				continue
			}
			if n := normTarget(s); isTarget && len(n) >= 4 {
				targets = append(targets, n)
			}
			if isDest {
				dest = append(dest, destForms(s)...)
			}
		}
	}
	slices.Sort(targets)
	slices.Sort(dest)
	return slices.Compact(targets), slices.Compact(dest)
}

// overflows reports whether args holds, at any depth, a number float64
// cannot hold. Inside an array nested in a value, the decoded reference
// drops the whole value for it and the reader skips the nested array
// (the one difference, deliberate).
func overflows(args string) bool {
	d := jsontext.NewDecoder(strings.NewReader(args), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == '0' {
			if _, err := strconv.ParseFloat(tok.String(), 64); err != nil {
				return true
			}
		}
	}
}

var argTexts = []string{
	`{"order_id":"A1002","email":"bob@example.com"}`,
	`{"to":["ann@example.com","李雷 <lilei@example.cn>"],"subject":"发票","body":"见附件"}`,
	`{"phone":"+86 138 0013 8000","amount":120.5,"reservation_id":12345}`,
	`{"address":"22 Baker Lane, Leeds LS6 2AB","order_id":"A1","order_id":"A2"}`,
	`{"ids":[1,2,[3],{"x":"y"},"A-77"],"recipient":null,"To":"Carol@Example.com"}`,
	`{"order_id":"A\u0031002","user_id":1e400}`, `{"order_id":"A1"} trailing`, `{"order_id":"A1"}{}`, `{"order_id":`,
	` {"customer_id" : "C-9"} `, `[{"order_id":"A1"}]`, `{}`, ``, `null`, "{\"to\":\"\xff@example.com\"}",
}

func TestArgFactsAgreesWithDecoding(t *testing.T) {
	w := detect.Default()
	for _, args := range argTexts {
		gotT, gotD := argFacts(w, args)
		wantT, wantD := argFactsDecoded(w, args)
		if !slices.Equal(gotT, wantT) || !slices.Equal(gotD, wantD) {
			t.Errorf("argFacts(%s) = %q, %q; decoding says %q, %q", args, gotT, gotD, wantT, wantD)
		}
	}
}

func FuzzArgFacts(f *testing.F) {
	for _, s := range argTexts {
		f.Add(s)
	}
	w := detect.Default()
	f.Fuzz(func(t *testing.T, args string) {
		gotT, gotD := argFacts(w, args)
		wantT, wantD := argFactsDecoded(w, args)
		if (!slices.Equal(gotT, wantT) || !slices.Equal(gotD, wantD)) && !overflows(args) {
			t.Errorf("argFacts(%q) = %q, %q; decoding says %q, %q", args, gotT, gotD, wantT, wantD)
		}
	})
}

// BenchmarkArgFacts measures the reader against decoding ("decoded"), on a
// write's arguments.
func BenchmarkArgFacts(b *testing.B) {
	w := detect.Default()
	args := `{"to":"c-A1002@example.com","subject":"Invoice INV-A1002","body":"Dear customer, please find attached the invoice of order A1002.","order_id":"A1002"}`
	for _, c := range []struct {
		name string
		fn   func(*lexicon.Compiled, string) ([]string, []string)
	}{{"reader", argFacts}, {"decoded", argFactsDecoded}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.fn(w, args)
			}
		})
	}
}
