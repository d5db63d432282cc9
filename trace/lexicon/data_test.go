package lexicon

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the data files in the formatter's layout")

// TestDataFiles decodes every shipped data file strictly and checks that
// it is laid out as formatData lays it out, so that a hand edit stays
// readable; -update rewrites a file that is not.
func TestDataFiles(t *testing.T) {
	for name, data := range map[string][]byte{"data/en.json": englishData, "data/zh.json": chineseData} {
		if _, err := decode(name, data); err != nil {
			t.Fatal(err)
		}
		want, err := formatData(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bytes.Equal(data, want) {
			continue
		}
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not in the formatter's layout: run go test ./trace/lexicon -update", name)
	}
}

func TestDecodeRefusesUnknownKeys(t *testing.T) {
	_, err := decode("typo.json", []byte(`{"WriteVerb": ["ship"]}`))
	if err == nil {
		t.Fatal("a misspelt key decoded")
	}
	if got := err.Error(); !bytes.Contains([]byte(got), []byte("typo.json")) || !bytes.Contains([]byte(got), []byte("WriteVerb")) {
		t.Errorf("error %q does not name the file and the key", got)
	}
}
