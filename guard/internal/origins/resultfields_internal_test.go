package origins

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// fieldsByDecoding lists a JSON result's fields as eachField read them
// before the walk: decoded into an any, maps visited in Go's (random) map
// order. ok is false for what encoding/json does not decode.
func fieldsByDecoding(result string) (fields []resultField, ok bool) {
	var v any
	if json.Unmarshal([]byte(result), &v) != nil {
		return nil, false
	}
	recs := 0
	var visit func(x any, key string, rec int)
	visit = func(x any, key string, rec int) {
		switch o := x.(type) {
		case map[string]any:
			own := recs
			recs++
			for k, e := range o {
				if _, nested := e.(map[string]any); nested {
					fields = append(fields, resultField{rec: own, key: key, value: k, name: true})
				}
				visit(e, k, own)
			}
		case []any:
			for _, e := range o {
				visit(e, key, rec)
			}
		default:
			if s, ok := rulekit.LeafString(o); ok && s != "" {
				fields = append(fields, resultField{rec: rec, key: key, value: s})
			}
		}
	}
	visit(v, "", 0)
	return fields, true
}

// recordSets groups fields by record, each record a sorted list of its
// fields, the records sorted: what stays when map order numbers the
// records differently.
func recordSets(fields []resultField) []string {
	byRec := map[int][]string{}
	for _, f := range fields {
		byRec[f.rec] = append(byRec[f.rec], fmt.Sprintf("%q=%q name=%v", f.key, f.value, f.name))
	}
	var out []string
	for _, fs := range byRec {
		slices.Sort(fs)
		out = append(out, strings.Join(fs, "; "))
	}
	slices.Sort(out)
	return out
}

// FuzzFieldWalker keeps the token walk over tool results in agreement with
// the decoding it stands in for: whatever it reads, encoding/json reads
// alike, into the same fields grouped into the same records; what it turns
// away, eachField decodes the old way.
func FuzzFieldWalker(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"a bare string"`, `12`, `-0`, `1.50`, `1e3`, `12345678901234567890`, `1e999`,
		`{"a":1,"b":[1,2.5,-3e2,"x",true,false,null],"c":{"d":"é"}}`, `{"a":"\u00e9\n","b":"\ud83d\ude00"}`,
		`[{"id":"A1","items":[{"sku":"X"},{"sku":"Y"}]},{"id":"A2"}]`, `{"credit_card_7334":{"brand":"visa"}}`,
		`{"a":1,"a":2}`, `[1,]`, `{"a" 1}`, " {\"a\":\"x\"} ", "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `[[[[[]]]]]`,
		`{"订单号":"订单 003","地址":"上海市浦东新区"}`, `{"a":"x"} {"b":"y"}`, `{"a":""}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := fieldWalkers.Get().(*fieldWalker)
		defer w.release()
		walked := w.walk(s)
		slow, decoded := fieldsByDecoding(s)
		switch {
		case !walked:
			return // eachField decodes it as before
		case !decoded:
			t.Fatalf("the walk read %q, encoding/json did not", s)
		}
		if got, want := recordSets(w.fields), recordSets(slow); !slices.Equal(got, want) {
			t.Fatalf("%q:\nwalk    %q\ndecoder %q", s, got, want)
		}
	})
}

func TestFieldWalkerOrder(t *testing.T) {
	w := fieldWalkers.Get().(*fieldWalker)
	defer w.release()
	if !w.walk(`{"user":{"id":"u1","orders":["#W1","#W2"]},"note":"two\norders","total":12.50}`) {
		t.Fatal("the walk turned away valid JSON")
	}
	var got []string
	for _, f := range w.fields {
		got = append(got, fmt.Sprintf("%d %s=%s", f.rec, f.key, f.value))
	}
	want := []string{"0 =user", "1 id=u1", "1 orders=#W1", "1 orders=#W2", "0 note=two\norders", "0 total=12.5"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func BenchmarkEachField(b *testing.B) {
	result := `{"user_id":"mia_li_3668","name":{"first_name":"Mia","last_name":"Li"},"address":{"address1":"975 Sunset Drive","city":"Austin","zip":"78750"},"email":"mia.li3818@example.com","payment_methods":{"credit_card_4421485":{"source":"credit_card","brand":"visa","last_four":"7447"}},"reservations":["NO6JO3","AIXC49"]}`
	b.ReportAllocs()
	for b.Loop() {
		eachField(result, func(int, string, string, bool) {})
	}
}
