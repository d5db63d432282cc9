package trace

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRecorderConcurrent(t *testing.T) {
	const goroutines, perG = 64, 50
	rec := NewRecorder("r", "s", "", RecorderOptions{})
	var wg sync.WaitGroup
	returned := make([][]int, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				if i == perG/2 && g%8 == 0 {
					rec.UserTurn(fmt.Sprintf("turn from %d", g))
				}
				s := &Step{Kind: KindTool, Name: fmt.Sprintf("g%d", g), Args: fmt.Sprint(i)}
				returned[g] = append(returned[g], rec.Add(s))
				if i%10 == 0 {
					rec.View(func(tr *Trace) { _ = len(tr.Steps) })
					_ = rec.Trace()
				}
			}
		})
	}
	wg.Wait()

	tr := rec.Trace()
	if got, want := len(tr.Steps), goroutines*perG; got != want {
		t.Fatalf("got %d steps, want %d", got, want)
	}
	for i, s := range tr.Steps {
		if s.Index != i {
			t.Fatalf("step %d has index %d", i, s.Index)
		}
	}
	seen := make([]bool, len(tr.Steps))
	for g, idxs := range returned {
		prev := -1
		for i, idx := range idxs {
			if seen[idx] {
				t.Fatalf("index %d returned twice", idx)
			}
			seen[idx] = true
			if idx <= prev {
				t.Errorf("goroutine %d got index %d after %d", g, idx, prev)
			}
			prev = idx
			if s := tr.Steps[idx]; s.Name != fmt.Sprintf("g%d", g) || s.Args != fmt.Sprint(i) {
				t.Errorf("index %d holds %s/%s, want g%d/%d", idx, s.Name, s.Args, g, i)
			}
		}
	}
	// Turns never decrease and always point at a recorded turn.
	if got, want := len(tr.UserTurns), goroutines/8; got != want {
		t.Errorf("got %d user turns, want %d", got, want)
	}
	last := -1
	for _, s := range tr.Steps {
		if s.Turn < last || s.Turn >= len(tr.UserTurns) {
			t.Fatalf("step %d: turn %d after %d, with %d turns", s.Index, s.Turn, last, len(tr.UserTurns))
		}
		last = s.Turn
	}
	if err := validate(tr); err != nil {
		t.Error(err)
	}
}

func TestRecorderClock(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		now  func() time.Time
		want func(time.Time) bool
	}{
		{"injected", func() time.Time { return at }, func(got time.Time) bool { return got.Equal(at) && got.Location() == time.UTC }},
		{"nil means time.Now", nil, func(got time.Time) bool { return time.Since(got) < time.Minute && got.Location() == time.UTC }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := NewRecorder("r", "s", "", RecorderOptions{Now: tt.now})
			if got := rec.Trace().Start; !tt.want(got) {
				t.Errorf("Start = %v", got)
			}
		})
	}
}

func TestRecorderCapsFields(t *testing.T) {
	tests := []struct {
		name          string
		max           int
		args, result  string
		wantArgs      string
		wantResult    string
		wantTruncated bool
	}{
		{"default cap, short", 0, "a", "b", "a", "b", false},
		{"default cap, long", 0, strings.Repeat("x", DefaultMaxField+1), "b",
			strings.Repeat("x", DefaultMaxField-len(TruncationMarker)) + TruncationMarker, "b", true},
		{"no cap", -1, strings.Repeat("x", DefaultMaxField+1), "", strings.Repeat("x", DefaultMaxField+1), "", false},
		{"result cut at a rune", 20, "", "你好世界你好世界", "", "你好" + TruncationMarker, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := NewRecorder("r", "", "", RecorderOptions{MaxField: tt.max})
			s := &Step{Kind: KindTool, Args: tt.args, Result: tt.result}
			rec.Add(s)
			if s.Args != tt.wantArgs || s.Result != tt.wantResult || s.Truncated != tt.wantTruncated {
				t.Errorf("got %.40q, %.40q, %v; want %.40q, %.40q, %v", s.Args, s.Result, s.Truncated, tt.wantArgs, tt.wantResult, tt.wantTruncated)
			}
		})
	}
}

func TestRecorderTraceIsACopy(t *testing.T) {
	rec := NewRecorder("r", "s", "route", RecorderOptions{})
	rec.UserTurn("hi")
	rec.SetMeta("k", "v")
	rec.SetTools([]ToolSpec{{Name: "t"}})
	rec.SetTools(nil) // keeps the tools
	rec.Add(&Step{Kind: KindTool, Name: "a"})
	tr := rec.Trace()
	// Appending to the copy, and changing its meta, leave the recorder as it was.
	tr.UserTurns = append(tr.UserTurns, "appended to the copy")
	tr.Steps = append(tr.Steps, &Step{Kind: KindTool, Name: "appended to the copy"})
	tr.Tools = append(tr.Tools, ToolSpec{Name: "appended to the copy"})
	tr.Meta["k"] = "changed"
	// Recording more, and releasing, leave the copy as it was.
	rec.UserTurn("later")
	rec.Add(&Step{Kind: KindTool, Name: "b"})
	rec.Release(1, nil)
	again := rec.Trace()
	if !slices.Equal(again.UserTurns, []string{"hi", "later"}) || again.Meta["k"] != "v" || len(again.Tools) != 1 ||
		len(again.Steps) != 1 || again.Steps[0].Name != "b" {
		t.Errorf("changing a copy changed the recorder: %+v", again)
	}
	if len(tr.Steps) != 2 || tr.Steps[0].Name != "a" || tr.UserTurns[1] != "appended to the copy" {
		t.Errorf("recording changed a copy: %+v", tr)
	}
	if rec.ID() != "r" || rec.SessionID() != "s" || again.Route != "route" || rec.UserTurns() != 2 {
		t.Errorf("identity: got %q %q %q %d", rec.ID(), rec.SessionID(), again.Route, rec.UserTurns())
	}
}

func TestTruncate(t *testing.T) {
	m := TruncationMarker
	tests := []struct {
		name    string
		s       string
		max     int
		want    string
		wantCut bool
	}{
		{"empty", "", 0, "", false},
		{"fits", "hello", 5, "hello", false},
		{"no cap", "hello", -1, "hello", false},
		{"ascii", strings.Repeat("a", 30), 20, strings.Repeat("a", 20-len(m)) + m, true},
		{"CJK at a boundary", "一二三四五六七八九十", 14 + 6, "一二" + m, true},
		{"CJK inside a rune", "一二三四五六七八九十", 14 + 7, "一二" + m, true},
		{"CJK one byte short of three runes", "一二三四五六七八九十", 14 + 8, "一二" + m, true},
		{"CJK three runes", "一二三四五六七八九十", 14 + 9, "一二三" + m, true},
		{"emoji", "😀😀😀😀😀😀", 14 + 5, "😀" + m, true},
		{"combining marks may split from their base", "éééééééééé", 14 + 3, "e\u0301" + m, true},
		{"cap equals the marker", "一二三四五六七八九十", 14, m, true},
		{"cap below the marker", "一二三四五六七八九十", 7, "一二", true},
		{"cap below the marker, inside a rune", "一二三四五六七八九十", 5, "一", true},
		{"cap zero", "abc", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "combining marks may split from their base" {
				tt.s = strings.Repeat("e\u0301", 10)
			}
			got, cut := Truncate(tt.s, tt.max)
			if got != tt.want || cut != tt.wantCut {
				t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tt.s, tt.max, got, cut, tt.want, tt.wantCut)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result %q is not valid UTF-8", got)
			}
			if tt.max >= 0 && len(got) > tt.max {
				t.Errorf("result is %d bytes, over the cap %d", len(got), tt.max)
			}
		})
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("一二三四五六七八九十", 20)
	f.Add("hello", 3)
	f.Add("\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, s string, max int) {
		got, cut := Truncate(s, max)
		if max < 0 || len(s) <= max {
			if got != s || cut {
				t.Fatalf("Truncate(%q, %d) = %q, %v; want it unchanged", s, max, got, cut)
			}
			return
		}
		if !cut || len(got) > max {
			t.Fatalf("Truncate(%q, %d) = %q, %v", s, max, got, cut)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q: split a rune", s, max, got)
		}
	})
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"empty", "", 0},
		{"one letter", "a", 1},
		{"four letters", "abcd", 1},
		{"five letters", "abcde", 2},
		{"sentence", "The quick brown fox jumps over the lazy dog.", 11},
		{"Han", "你好世界", 4},
		{"Kana", "こんにちは", 5},
		{"Hangul", "안녕하세요", 5},
		{"mixed", "order 1042 已发货", 3 + 3},
		{"other scripts count two bytes a rune", "привет", 3},
		{"CJK punctuation counts as other", "。", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.s); got != tt.want {
				t.Errorf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

func TestPrefixAndToolNames(t *testing.T) {
	tr := &Trace{Tools: []ToolSpec{{Name: "a"}, {Name: "b"}}, Steps: []*Step{{Index: 0}, {Index: 1}, {Index: 2}}}
	p := tr.Prefix(2)
	if len(p.Steps) != 2 || cap(p.Steps) != 2 || len(tr.Steps) != 3 {
		t.Errorf("Prefix(2): len %d cap %d", len(p.Steps), cap(p.Steps))
	}
	p.Steps = append(p.Steps, &Step{Index: 9})
	if tr.Steps[2].Index != 2 {
		t.Error("appending to a prefix changed the trace")
	}
	if got := tr.ToolNames(); strings.Join(got, ",") != "a,b" {
		t.Errorf("ToolNames() = %q", got)
	}
}
