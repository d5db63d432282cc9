package lexicon_test

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/agentguard/agentguard/trace/lexicon"
)

func TestShippedLexiconsCompile(t *testing.T) {
	for _, tc := range []struct {
		name string
		lx   *lexicon.Lexicon
	}{
		{"English", lexicon.English()},
		{"Chinese", lexicon.Chinese()},
		{"Default", lexicon.Default()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.lx.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEveryPatternCompiles compiles every pattern source of Default on its
// own, found by walking the struct, so that a pattern hidden by a join or
// left out of compilation is still checked.
func TestEveryPatternCompiles(t *testing.T) {
	lx := lexicon.Default()
	n := 0
	check := func(field, src string) {
		n++
		src = strings.ReplaceAll(src, "MONTH", "(?:may)")
		src = strings.ReplaceAll(src, "CH", "(?:sms)")
		if _, err := regexp.Compile(src); err != nil {
			t.Errorf("%s: %v", field, err)
		}
	}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if f.IsExported() {
					walk(path+"."+f.Name, v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(fmt.Sprintf("%s[%v]", path, k), v.MapIndex(k))
			}
		case reflect.String:
			if patternField(path) && v.String() != "" {
				check(path, v.String())
			}
		}
	}
	walk("Lexicon", reflect.ValueOf(lx).Elem())
	if n < 50 {
		t.Errorf("checked %d patterns, want at least 50", n)
	}
}

// patternField reports whether the string at path is a pattern rather than
// a word, a name or a reply.
func patternField(path string) bool {
	for _, words := range []string{".Memory.", ".WriteVerbs", ".EmptyResults", "Cues", ".ScopeEnd", ".NameStop", ".Abbreviations",
		".Replies", ".Name", ".Kind", ".RevokeNegators", ".NameNotFirst", ".AddressKinds", ".IDKinds"} {
		if strings.Contains(path, words) {
			return false
		}
	}
	return true
}

// replyTemplates returns the reply texts of r by field name.
func replyTemplates(r lexicon.Replies) map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String {
			out[v.Type().Field(i).Name] = f.String()
		}
	}
	return out
}

var fmtVerb = regexp.MustCompile(`%[sqdv]`)

func TestRepliesAreOneLanguage(t *testing.T) {
	c := lexicon.Default().Compiled()
	for _, tc := range []struct {
		lang lexicon.Lang
		ok   func(s string) string // what is wrong with s, or ""
	}{
		{lexicon.EN, func(s string) string {
			if strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 && unicode.IsLetter(r) }) >= 0 {
				return "holds a letter that is not English"
			}
			return ""
		}},
		{lexicon.ZH, func(s string) string {
			s = fmtVerb.ReplaceAllString(s, "")
			if strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && unicode.IsLetter(r) }) >= 0 {
				return "holds a Latin letter"
			}
			if strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) < 0 && strings.TrimSpace(s) != "" {
				return "holds no Chinese character"
			}
			return ""
		}},
	} {
		for field, text := range replyTemplates(c.Replies(tc.lang)) {
			t.Run(string(tc.lang)+"/"+field, func(t *testing.T) {
				if text == "" {
					t.Fatal("empty")
				}
				if why := tc.ok(text); why != "" {
					t.Errorf("%q %s", text, why)
				}
			})
		}
	}
}

func TestLangOf(t *testing.T) {
	c := lexicon.Default().Compiled()
	for _, tc := range []struct {
		text string
		want lexicon.Lang
	}{
		{"", lexicon.EN},
		{"Where is order A9?", lexicon.EN},
		{"帮我查一下订单 A9", lexicon.ZH},
		{"I want to return 这个", lexicon.ZH},
		{"Café crème, s'il vous plaît", lexicon.EN},
	} {
		if got := c.LangOf(tc.text); got != tc.want {
			t.Errorf("LangOf(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.LangOf("I want to return 这个") }); n != 0 {
		t.Errorf("LangOf allocates %v times", n)
	}
	// A lexicon with only Chinese replies answers every turn in Chinese.
	zh := lexicon.Chinese().Compiled()
	if got := zh.LangOf("hello"); got != lexicon.ZH {
		t.Errorf("Chinese().LangOf(hello) = %s, want zh", got)
	}
}

func TestMerge(t *testing.T) {
	en, zh := lexicon.English(), lexicon.Chinese()
	m := lexicon.Merge(en, zh, en) // a repeat adds nothing
	if got, want := len(m.WriteVerbs), len(en.WriteVerbs); got != want {
		t.Errorf("%d write verbs, want %d", got, want)
	}
	if got := len(m.Memory.Channels); got != 5 {
		t.Errorf("%d channels, want 5 (joined by name)", got)
	}
	if got := m.Memory.Channels[0].Words; len(got) != len(en.Memory.Channels[0].Words)+len(zh.Memory.Channels[0].Words) {
		t.Errorf("sms words = %q, want the English and the Chinese ones", got)
	}
	if got, want := len(m.Claims.Channels), len(en.Claims.Channels); got != want {
		t.Errorf("%d claim channels, want %d (joined by name)", got, want)
	}
	if got := m.Claims.Channels[0]; len(got.Noun) != len(en.Claims.Channels[0].Noun)+len(zh.Claims.Channels[0].Noun) || got.Rank == 0 || !got.Absent {
		t.Errorf("sms claim channel = %+v, want the English and the Chinese words, and the English rank and flags", got)
	}

	// Merge of one is a copy: changing it leaves the original alone.
	cp := lexicon.Merge(en)
	cp.WriteVerbs[0] = "changed"
	cp.Memory.AddressKinds["x"] = "y"
	if en.WriteVerbs[0] == "changed" || en.Memory.AddressKinds["x"] != "" {
		t.Error("Merge shares storage with its argument")
	}
}

func TestCheckReportsBadPatterns(t *testing.T) {
	lx := lexicon.Default()
	lx.Absence = append(lx.Absence, `(unclosed`)
	lx.Replies[lexicon.ZH] = lexicon.Replies{Scripts: []string{"Klingon"}}
	err := lx.Check()
	if !errors.Is(err, lexicon.ErrBadPattern) {
		t.Fatalf("Check = %v, want ErrBadPattern", err)
	}
	var le *lexicon.Error
	if !errors.As(err, &le) || le.Field != "Absence[2]" {
		t.Errorf("Check = %v, want an *Error for Absence[2]", err)
	}
	if !strings.Contains(err.Error(), `Klingon`) {
		t.Errorf("Check = %v, want the unknown script named", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Compiled did not panic on a bad lexicon")
		}
	}()
	lx.Compiled()
}

func TestRepliesFallBack(t *testing.T) {
	// A language with only some replies gets the others from English.
	fr := &lexicon.Lexicon{Replies: map[lexicon.Lang]lexicon.Replies{
		"fr": {Scripts: []string{"Latin"}, Refusal: "Je ne peux pas répondre à cela."},
	}}
	c := lexicon.Merge(lexicon.English(), fr).Compiled()
	if got := c.LangOf("Bonjour"); got != "fr" {
		t.Fatalf("LangOf = %s, want fr", got)
	}
	r := c.Replies("fr")
	if r.Refusal != "Je ne peux pas répondre à cela." || r.Handoff != lexicon.English().Replies[lexicon.EN].Handoff {
		t.Errorf("fr replies = %q / %q", r.Refusal, r.Handoff)
	}
	if got := c.Replies("de").Refusal; got != lexicon.English().Replies[lexicon.EN].Refusal {
		t.Errorf("unknown language's refusal = %q, want the English one", got)
	}
}

func TestGroup(t *testing.T) {
	c := lexicon.Default().Compiled()
	var got []string
	for _, m := range c.ClauseRefs.FindAllStringSubmatch("see clause 7.3 and 第5条", -1) {
		got = append(got, lexicon.Group(c.ClauseRefs, m, "num"))
	}
	if strings.Join(got, ",") != "7.3,5" {
		t.Errorf("clause numbers = %q, want 7.3 and 5", got)
	}
}
