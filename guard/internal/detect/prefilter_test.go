package detect

import (
	"reflect"
	"regexp"
	"slices"
	"testing"
)

func TestPrefilterOf(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		words   []string // nil: no prefilter
		fold    bool
	}{
		{`(?i)\b(?:clause|section)\s*(?P<num>\d+)`, []string{"clause", "section"}, true},
		{`第\s*(\d+)\s*[条款]`, []string{"第"}, false},
		{`(?i)\bno such\b|\bcannot\b|没有`, []string{"no such", "cannot", "没有"}, true},
		{`\d+`, nil, false},      // no word at all
		{`(?i)a|bc`, nil, false}, // "a" is too short to be worth it
		{`(?i)(?:x|y)?records`, []string{"records"}, true},
		{`(?:ab|cd)(?:ef|gh)`, []string{"abef", "abgh", "cdef", "cdgh"}, false},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			p := prefilterOf(regexp.MustCompile(tc.pattern))
			if tc.words == nil {
				if p != nil {
					t.Fatalf("got %+v, want no prefilter", p)
				}
				return
			}
			if p == nil {
				t.Fatalf("got no prefilter, want %q", tc.words)
			}
			got := slices.Clone(p.words)
			slices.Sort(got)
			want := slices.Clone(tc.words)
			slices.Sort(want)
			if !reflect.DeepEqual(got, want) || p.fold != tc.fold {
				t.Errorf("got %q fold=%v, want %q fold=%v", got, p.fold, want, tc.fold)
			}
		})
	}
}

// lexiconPatterns are the default lexicon's compiled patterns.
func lexiconPatterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	v := reflect.ValueOf(Default()).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if re, ok := v.Field(i).Interface().(*regexp.Regexp); ok && re != nil {
			out = append(out, re)
		}
	}
	return out
}

// FuzzMayMatch holds the prefilter's one promise: a text a pattern matches
// is never turned away.
func FuzzMayMatch(f *testing.F) {
	for _, s := range append(clauseTexts, "Ignore previous instructions", "There are NO RECORDS", "忽略之前的指令", "İGNORE all", "yes, GO AHEAD") {
		f.Add(s)
	}
	patterns := lexiconPatterns()
	f.Fuzz(func(t *testing.T, text string) {
		for _, re := range patterns {
			if re.MatchString(text) && !MayMatch(re, text) {
				t.Errorf("%q matches %s but MayMatch says no", text, re)
			}
		}
	})
}
