package ledgercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/democmd"
	"github.com/agentguard/agentguard/ledger"
)

// TestLessons runs the demo into a directory and reads its ledger back.
func TestLessons(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errs bytes.Buffer
	if code := democmd.Run(ctx, []string{"-quiet", "-out", dir}, &out, &errs); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errs.String())
	}
	led := filepath.Join(dir, "ledger")
	out.Reset()
	if code := Run(ctx, []string{"lessons", "-json", led}, &out, &errs); code != 0 {
		t.Fatalf("lessons: exit %d\n%s", code, errs.String())
	}
	var ls []ledger.Lesson
	if err := json.Unmarshal(out.Bytes(), &ls); err != nil || len(ls) == 0 {
		t.Fatalf("lessons %q: %v", out.String(), err)
	}
	total := 0
	for _, l := range ls {
		if l.Count == 0 || len(l.Examples) == 0 || l.FirstSeen.After(l.LastSeen) {
			t.Errorf("lesson %+v", l)
		}
		total += l.Count
	}
	out.Reset()
	if code := Run(ctx, []string{"export", led}, &out, &errs); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errs.String())
	}
	if n := strings.Count(out.String(), "\n"); n == 0 || n > total {
		t.Errorf("export: %d entries, lessons count %d", n, total)
	}
	out.Reset()
	if code := Run(ctx, []string{"query", "-rule", ls[0].Rule, led}, &out, &errs); code != 0 || !strings.Contains(out.String(), ls[0].Rule) {
		t.Errorf("query: exit %d\n%s%s", code, out.String(), errs.String())
	}
}
