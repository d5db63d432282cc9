package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCorpusProhibitions runs the rule-based extractor over every user turn
// of the shared corpus (τ-bench, τ², AgentDojo: 2,921 turns). No user there
// bans a channel, so every prohibition found is a false one — the card
// would then show the model a ban the user never gave and the enforcer
// would block its calls. Before the lexicon's Unruled list ("I don't have
// my email handy", "not sure which email I used") it found 17; the two
// left are a τ user's own "I will reach out … ###STOP###" (τ's end marker
// read as "stop") and a delivery window.
func TestCorpusProhibitions(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Skipf("no corpus at %s: the shared corpus is not checked out beside the repository", dir)
	}
	ex := RuleBased(nil)
	turns, bans := 0, 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var run struct {
				ID        string   `json:"trace_id"`
				UserTurns []string `json:"user_turns"`
			}
			if err := json.Unmarshal(sc.Bytes(), &run); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for i, u := range run.UserTurns {
				turns++
				cs, err := ex.Extract(context.Background(), i, u, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					if c.Kind == KindProhibition && c.Status == Active {
						bans++
						t.Logf("%s turn %d: prohibition %s %q", run.ID, i, c.Key, c.Value)
					}
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	t.Logf("%d user turns, %d prohibitions", turns, bans)
	if bans > 2 {
		t.Errorf("%d prohibitions in corpus turns that ban nothing, want at most 2", bans)
	}
}
