package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func TestRunsJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     Runs
		wantErr  string // in the error's text; "" for none
	}{
		{"runs", `[[0,812],[815,990]]`, Runs{{0, 812}, {815, 990}}, ""},
		{"one", `[[3,4]]`, Runs{{3, 4}}, ""},
		{"adjacent runs are one", `[[0,2],[2,5]]`, Runs{{0, 5}}, ""},
		{"empty", `[]`, nil, ""},
		{"null", `null`, nil, ""},
		{"old flat indexes", `[0,1,2,5,7,8]`, Runs{{0, 3}, {5, 6}, {7, 9}}, ""},
		{"old, one index", `[4]`, Runs{{4, 5}}, ""},
		{"spaced", ` [ [1, 2] ,[ 4,6 ] ] `, Runs{{1, 2}, {4, 6}}, ""},
		{"run of three numbers", `[[0,1,2]]`, nil, "run 0 has 3 numbers, want 2"},
		{"empty run", `[[3,3]]`, nil, "run 0 is [3,3], want 0 <= from < to"},
		{"reversed run", `[[5,2]]`, nil, "run 0 is [5,2]"},
		{"negative run", `[[-1,2]]`, nil, "run 0 is [-1,2]"},
		{"overlapping runs", `[[0,5],[4,8]]`, nil, "run 1 [4,8] starts before the end of the one before it, 5"},
		{"runs out of order", `[[6,8],[0,2]]`, nil, "run 1 [0,2]"},
		{"indexes out of order", `[3,1]`, nil, "index 1 is 1"},
		{"index twice", `[1,1]`, nil, "index 1 is 1"},
		{"negative index", `[-2]`, nil, "index 0 is -2"},
		{"not an array", `{"from":0}`, nil, "memory: decode: runs:"},
		{"mixed", `[[0,1],2]`, nil, "memory: decode: runs:"},
		{"strings", `["1"]`, nil, "memory: decode: runs:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Runs
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != "" {
				var e *Error
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &e) {
					t.Fatalf("Unmarshal(%s) = %v, %v; want an *Error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRunsMethods(t *testing.T) {
	r := Runs{{0, 3}, {5, 6}, {9, 12}}
	if got, want := slices.Collect(r.All()), []int{0, 1, 2, 5, 9, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("All = %v, want %v", got, want)
	}
	if r.Len() != 7 {
		t.Errorf("Len = %d, want 7", r.Len())
	}
	for i := -1; i < 14; i++ {
		if got, want := r.Contains(i), slices.Contains(slices.Collect(r.All()), i); got != want {
			t.Errorf("Contains(%d) = %v, want %v", i, got, want)
		}
	}
	b, err := json.Marshal(r)
	if err != nil || string(b) != `[[0,3],[5,6],[9,12]]` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

// FuzzRunsJSON checks that what unmarshals is a valid set that marshals
// back to the same set.
func FuzzRunsJSON(f *testing.F) {
	for _, s := range []string{`[[0,812],[815,990]]`, `[0,1,2,5]`, `[]`, `null`, `[[0,2],[2,5]]`, `[[5,2]]`, `[1,1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Runs
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		for k, run := range r {
			if run[0] < 0 || run[0] >= run[1] || k > 0 && run[0] <= r[k-1][1] {
				t.Fatalf("%s: invalid runs %v", b, r)
			}
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var again Runs
		if err := json.Unmarshal(out, &again); err != nil || !slices.Equal(again, r) {
			t.Fatalf("%s: %v marshals to %s, which unmarshals to %v, %v", b, r, out, again, err)
		}
	})
}

// TestCompressStepOldFormat reads a trace recorded before Runs (by the
// guard's compressor of then, with "dropped" a flat array of indexes) and
// checks that each of its compress steps decodes to the report the
// compressor of now makes of the same conversation.
func TestCompressStepOldFormat(t *testing.T) {
	f, err := os.Open("testdata/compress_old_format.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := trace.NewReader(f)
	r.Source = f.Name()
	tr, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	var old []CompressReport
	for _, s := range tr.Steps {
		if s.Kind != trace.KindMemory || s.Name != StepCompress {
			continue
		}
		if !strings.Contains(s.Result, `"dropped":[2,`) {
			t.Fatalf("step %d is not in the old format: %s", s.Index, s.Result)
		}
		var rep CompressReport
		if err := json.Unmarshal([]byte(s.Result), &rep); err != nil {
			t.Fatalf("step %d: %v", s.Index, err)
		}
		old = append(old, rep)
	}

	// The conversation the trace was recorded from, compressed now.
	msgs := []llms.MessageContent{sysMsg("You are the after-sales assistant of a small online shop. Be brief.")}
	card := &Card{}
	var z Compressor
	var now []CompressReport
	for turn, text := range tr.UserTurns {
		msgs = append(msgs, userMsg(text))
		card.Observe(context.Background(), nil, turn, text)
		if _, rep := z.Compress(msgs, 120, card); len(rep.Dropped) > 0 || len(rep.Elided) > 0 || rep.OverBudget {
			now = append(now, rep)
		}
		msgs = append(msgs, aiMsg(fmt.Sprintf("Noted (%d). Is there anything else I can help with?", turn)))
	}
	if len(old) == 0 || len(old) != len(now) {
		t.Fatalf("%d compress steps recorded, %d now", len(old), len(now))
	}
	for k := range old {
		if !sameReport(old[k], now[k]) {
			t.Errorf("compress step %d decodes to\n%+v\nnow\n%+v", k, old[k], now[k])
		}
	}
	b, _ := json.Marshal(now[len(now)-1])
	t.Logf("recorded now: %s", b)
}
