package memory

import "testing"

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in   string
		want string // the canonical form; "" when it does not parse
	}{
		{"06-01..06-05", "06-01..06-05"},
		{"2025-06-01..2025-06-05", "2025-06-01..2025-06-05"},
		{"6-1..", "06-01.."},
		{"..09:00", "..09:00"},
		{"before 09:00", "before 09:00"},
		{"after 2025-06-03", "after 2025-06-03"},
		{" 22:00..06:00 ", "22:00..06:00"},
		{"..", ""},
		{"06-01..09:00", ""},
		{"13-01..", ""},
		{"25:00..", ""},
		{"before", ""},
		{"tomorrow", ""},
		{"", ""},
	}
	for _, tt := range tests {
		w, ok := parseWindow(tt.in)
		got := ""
		if ok {
			got = w.String()
		}
		if got != tt.want {
			t.Errorf("parseWindow(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWindowContains(t *testing.T) {
	tests := []struct {
		window, point string
		want          bool
	}{
		{"06-01..06-05", "06-01", true},
		{"06-01..06-05", "06-05", true},
		{"06-01..06-05", "06-06", false},
		{"06-01..06-05", "2024-06-03", true}, // no year on the window: any year
		{"2025-06-01..2025-06-05", "2026-06-03", false},
		{"2025-06-01..2025-06-05", "06-03", true},
		{"before 09:00", "09:00", false},
		{"before 09:00", "08:59", true},
		{"..09:00", "09:00", true},
		{"after 20:00", "23:30", true},
		{"22:00..06:00", "23:00", true}, // overnight
		{"22:00..06:00", "12:00", false},
		{"12-28..01-03", "01-02", true}, // over new year
		{"06-01..06-05", "10:00", true}, // a time says nothing about days
	}
	for _, tt := range tests {
		w, ok := parseWindow(tt.window)
		p, ok2 := parsePoint(tt.point)
		if !ok || !ok2 {
			t.Fatalf("bad test case %q %q", tt.window, tt.point)
		}
		if got := w.contains(p); got != tt.want {
			t.Errorf("%s contains %s = %v, want %v", tt.window, tt.point, got, tt.want)
		}
	}
}

func TestFindWindow(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"between 1 and 5 June", "06-01..06-05"},
		{"June 1-5", "06-01..06-05"},
		{"from June 1st to June 5th, 2025", "06-01..2025-06-05"},
		{"between 2025-06-01 and 2025-06-05", "2025-06-01..2025-06-05"},
		{"by 10 June", "..06-10"},
		{"before June 10", "before 06-10"},
		{"not before 3 July", "07-03.."},
		{"6月1日到6月5日", "06-01..06-05"},
		{"6月1日至5日", "06-01..06-05"},
		{"2025年6月1号到6月5号", "2025-06-01..2025-06-05"},
		{"6月10日之前", "before 06-10"},
		{"6月3日起", "06-03.."},
		{"after 9am", "after 09:00"},
		{"between 9am and 5:30pm", "09:00..17:30"},
		{"9am-5pm", "09:00..17:00"},
		{"before noon", "before 12:00"},
		{"上午9点到下午5点半", "09:00..17:30"},
		{"晚上八点以后", "after 20:00"},
		{"早上9点前", "before 09:00"},
		{"on June 3", "06-03..06-03"},
		{"6月8日送货", "06-08..06-08"},
		{"June 3", ""},
		{"at 9am", ""},
		{"in 2025", ""},
	}
	for _, tt := range tests {
		w, ok := findWindow(&defaultWords().Time, tt.in)
		got := ""
		if ok {
			got = w.String()
		}
		if got != tt.want {
			t.Errorf("findWindow(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[string]int{"9": 9, "十": 10, "十二": 12, "二十": 20, "二十三": 23, "两": 2, "零": 0, "十十": -1, "三四": -1, "": -1} {
		if got := number(&defaultWords().Time, in); got != want {
			t.Errorf("number(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzMayISODate holds the prefilter to the pattern: a text isoDate
// matches is never turned away.
func FuzzMayISODate(f *testing.F) {
	for _, s := range []string{"2025-06-01", "订单 A1010", "due 2025/6/1, total 120.50", "v1.2.3", "A1010-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isoDate.MatchString(s) && !mayISODate(s) {
			t.Errorf("mayISODate(%q) = false, but isoDate matches %q", s, isoDate.FindString(s))
		}
	})
}
