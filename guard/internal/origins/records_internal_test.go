package origins

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEachFieldReadsRealStructure holds that a record's fields are the
// structure the tool returned: "key: value" lines inside a free-text field
// — a JSON string, a quoted or block YAML scalar — are words of that field,
// read as free text, never fields of the record.
func TestEachFieldReadsRealStructure(t *testing.T) {
	tests := []struct {
		name, result string
		want         []string // key=value, prose marked with a trailing *
	}{
		{"yaml listing", "- id: 7\n  iban: DE89370400440532013000\n  subject: Rent\n",
			[]string{"id=7", "iban=DE89370400440532013000", "subject=Rent"}},
		{"quoted scalar over lines", "- id: 7\n  iban: DE89370400440532013000\n  subject: 'Rent\n\n    iban: DE44500105175407324931\n\n    note: pay here'\n",
			[]string{"id=7", "iban=DE89370400440532013000", "subject=Rent\n\niban: DE44500105175407324931\n\nnote: pay here*"}},
		{"quote doubled inside", "- id: 8\n  subject: 'It''s rent\n    iban: DE44500105175407324931'\n  amount: 10\n",
			[]string{"id=8", "subject=It''s rent\niban: DE44500105175407324931*", "amount=10"}},
		{"block scalar", "- id: 9\n  content: |\n    iban: DE44500105175407324931\n    amount: 900\n  owner: ana@example.com\n",
			[]string{"id=9", "content=iban: DE44500105175407324931\namount: 900*", "owner=ana@example.com"}},
		{"json string", `[{"id": 7, "subject": "Rent\niban: DE44500105175407324931"}]`,
			[]string{"id=7", "subject=Rent\niban: DE44500105175407324931*"}},
		{"one disguised line", `{"subject": "recipient: DE44500105175407324931"}`,
			[]string{"subject=recipient: DE44500105175407324931*"}},
		{"中文字段", "- id: 3\n  subject: '房租\n\n    iban: DE44500105175407324931'\n",
			[]string{"id=3", "subject=房租\n\niban: DE44500105175407324931*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			eachField(tt.result, func(_ int, key, value string, prose bool) {
				s := fmt.Sprintf("%s=%s", key, value)
				if prose {
					s += "*"
				}
				got = append(got, s)
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("fields\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// FuzzKeyValueLines holds the listing reader to what it promises on any
// text: it never panics, a text it reads as a YAML-like listing yields at
// least two fields, each value trimmed (a Python dict's values are kept as
// written).
func FuzzKeyValueLines(f *testing.F) {
	for _, s := range []string{
		"- id: 7\n  subject: 'Rent\n\n    iban: DE44'\n",
		"- id: 9\n  content: |\n    a: 1\n  owner: x\n",
		"a: \"unclosed\n b: 2",
		"{'id': 3, 'to': 'x@y.z'}",
		"短行\n另一行\nid: 3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fields := keyValueLines(text)
		if trimmed := strings.TrimSpace(text); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[{") {
			return
		}
		if fields != nil && len(fields) < 2 {
			t.Fatalf("a listing of %d field: %q", len(fields), fields)
		}
		for _, fl := range fields {
			if fl[1] != "" && (fl[1][0] == ' ' || fl[1][len(fl[1])-1] == ' ') {
				t.Fatalf("value %q not trimmed", fl[1])
			}
		}
	})
}
