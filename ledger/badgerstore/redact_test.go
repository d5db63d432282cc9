package badgerstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
	"github.com/dgraph-io/badger/v4"
)

// pii is personal data of every kind the default redactor masks, each
// value distinct so that compression cannot hide a repeat.
type pii struct{ email, mobile, intl, national, session, card, cardSpaced, id string }

func piiFor(i int) pii {
	return pii{
		email:      fmt.Sprintf("customer%d.lee@example.com", i),
		mobile:     fmt.Sprintf("138%08d", 10013800+i),
		intl:       fmt.Sprintf("+44 20 7946 %04d", 1000+i),
		national:   fmt.Sprintf("020 7946 %04d", 2000+i),
		session:    fmt.Sprintf("s%d.chan@example.org", i),
		card:       []string{"4111111111111111", "5555555555554444", "4012888888881881", "6011000990139424"}[i%4],
		cardSpaced: []string{"3782 822463 10005", "4242 4242 4242 4242", "5105-1051-0510-5100", "3530 1113 3330 0000"}[i%4],
		id:         []string{"11010519491231002X", "110101199003074514", "440304198512121237", "320102199901010016"}[i%4],
	}
}

// literal are the values as the violations carry them.
func (p pii) literal() []string {
	return []string{p.email, p.mobile, p.intl, p.national, p.session, p.card, p.cardSpaced, p.id}
}

// needles are the forms that must not reach the disk: the values, and the
// numbers without their separators.
func (p pii) needles() []string {
	return append(p.literal(), strings.ReplaceAll(p.intl, " ", ""), strings.ReplaceAll(p.national, " ", ""),
		strings.NewReplacer(" ", "", "-", "").Replace(p.cardSpaced))
}

func piiViolation(i int) trace.Violation {
	p := piiFor(i)
	v := violation("pii-leak", fmt.Sprint("trace-", i))
	v.Evidence = fmt.Sprintf(`{"email":%q,"phone":%q,"alt":"%s","card":"%s","card2":"%s","id":"%s"}`,
		p.email, p.mobile, p.intl, p.card, p.cardSpaced, p.id)
	v.Message = "refund to " + p.email + " card " + p.cardSpaced
	v.Question = "is " + p.mobile + " still your number?"
	v.SessionID = p.session // a session keyed by the customer's address
	v.Facts = []trace.Fact{{Kind: trace.FactArgument, Step: 1, Where: "to", Text: "call " + p.national, Says: "sends content to " + p.national}}
	return v
}

// grepDir returns the needles found in any file under dir.
func grepDir(t *testing.T, dir string, needles []string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = trimZeros(b)
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found = append(found, filepath.Base(p)+": "+n)
			}
		}
		return nil
	})
	return found
}

// trimZeros cuts the zeros off the end of b: badger preallocates its logs.
// It compares 64 KB at a time, which stays quick under the race detector.
func trimZeros(b []byte) []byte {
	zeros := make([]byte, 64<<10)
	for len(b) >= len(zeros) && bytes.Equal(b[len(b)-len(zeros):], zeros) {
		b = b[:len(b)-len(zeros)]
	}
	return bytes.TrimRight(b, "\x00")
}

func TestRedactionOnDisk(t *testing.T) {
	needReadOnly(t)
	const n = 40
	var needles, literal []string
	for i := 0; i < n; i++ {
		needles = append(needles, piiFor(i).needles()...)
		literal = append(literal, piiFor(i).literal()...)
	}
	tests := []struct {
		name     string
		opts     Options
		wantLeak bool
	}{
		{"default", Options{}, false},
		{"durable", Options{Durable: true}, false},
		{"own redactor", Options{Redact: redact.Redactor{CardLast4: true}.Redact}, false},
		// The control: without redaction the same search finds everything,
		// so the search itself works.
		{"off", Options{Redact: redact.None}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Open(dir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if i%2 == 0 {
					mustAppend(t, l, piiViolation(i))
				} else if _, err := l.AppendBatch(ctx, []trace.Violation{piiViolation(i)}); err != nil {
					t.Fatal(err)
				}
			}
			// Open: the entries are in the write-ahead log, uncompressed.
			whileOpen := grepDir(t, dir, needles)
			var export bytes.Buffer
			if _, err := l.Export(ctx, &export, ledger.Query{}); err != nil {
				t.Fatal(err)
			}
			snap := filepath.Join(t.TempDir(), "snap")
			if err := l.Snapshot(ctx, snap); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Closed: in tables, compressed; so also read every value back
			// through badger itself.
			closed := grepDir(t, dir, needles)
			inSnapshot := grepDir(t, snap, needles)
			var values []byte
			db, err := badger.Open(badgerOptions(dir, Options{ReadOnly: true}))
			if err != nil {
				t.Fatal(err)
			}
			db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.DefaultIteratorOptions)
				defer it.Close()
				for it.Rewind(); it.Valid(); it.Next() {
					v, _ := it.Item().ValueCopy(nil)
					values = append(values, v...)
				}
				return nil
			})
			db.Close()
			var inExport, inValues []string
			search := needles
			if tt.wantLeak {
				search = literal
			}
			for _, nd := range search {
				if bytes.Contains(export.Bytes(), []byte(nd)) {
					inExport = append(inExport, nd)
				}
				if bytes.Contains(values, []byte(nd)) {
					inValues = append(inValues, nd)
				}
			}
			if tt.wantLeak {
				if len(inValues) != len(literal) || len(inExport) != len(literal) || len(whileOpen) < len(literal) {
					t.Errorf("control found %d/%d in values, %d in the export, %d in files: the search is broken",
						len(inValues), len(literal), len(inExport), len(whileOpen))
				}
				return
			}
			for where, found := range map[string][]string{
				"files while open": whileOpen, "files after Close": closed, "snapshot": inSnapshot,
				"export": inExport, "stored values": inValues,
			} {
				if len(found) > 0 {
					t.Errorf("personal data in %s: %v", where, found)
				}
			}
			if !bytes.Contains(export.Bytes(), []byte(redact.MaskEmail)) || !bytes.Contains(export.Bytes(), []byte(redact.MaskID)) {
				t.Errorf("export holds no masks:\n%.400s", export.String())
			}
		})
	}
}

func TestRedactionAcrossTheEvidenceCap(t *testing.T) {
	// Evidence much longer than the cap is redacted in a window, and what
	// the window cuts in two must not survive either.
	p := piiFor(1)
	unit := " card " + p.cardSpaced + " mail " + p.email + " tel " + p.intl + " id " + p.id + " ."
	for _, capBytes := range []int{0, 100, 1000} {
		for shift := 0; shift < len(unit); shift += 7 {
			l := openMem(t, Options{MaxEvidence: capBytes})
			v := violation("r", "t")
			v.Evidence = strings.Repeat("x", shift) + strings.Repeat(unit, 20000/len(unit)+redactWindow(capBytes)/len(unit)+1)
			mustAppend(t, l, v)
			es, err := l.Query(ctx, ledger.Query{})
			if err != nil {
				t.Fatal(err)
			}
			got := es[0].Evidence
			for _, nd := range p.needles() {
				// Any 8-character piece of a value is too much.
				for k := 0; k+8 <= len(nd); k++ {
					if piece := nd[k : k+8]; strings.ContainsAny(piece, "0123456789@") && strings.Contains(got, piece) {
						t.Fatalf("cap %d, shift %d: %q of %q survived in …%q", capBytes, shift, nd[k:k+8], nd, got[max(0, len(got)-200):])
					}
				}
			}
			limit := capBytes
			if limit == 0 {
				limit = DefaultMaxEvidence
			}
			if len(got) > limit || !strings.HasSuffix(got, trace.TruncationMarker) || !utf8.ValidString(got) {
				t.Fatalf("cap %d: evidence of %d bytes, ending %q", capBytes, len(got), got[max(0, len(got)-20):])
			}
		}
	}
}

func TestEntryCap(t *testing.T) {
	tests := []struct {
		name string
		edit func(v *trace.Violation)
	}{
		{"evidence", func(v *trace.Violation) { v.Evidence = strings.Repeat("é", 3<<18) }},
		{"escaped evidence", func(v *trace.Violation) { v.Evidence = strings.Repeat("\x01", 3<<18) }},
		{"message", func(v *trace.Violation) { v.Message = strings.Repeat("m", 3<<19) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Open(dir, Options{Durable: true, MaxEvidence: -1})
			if err != nil {
				t.Fatal(err)
			}
			v := violation("r", "t")
			tt.edit(&v)
			mustAppend(t, l, v)
			var out bytes.Buffer
			if _, err := l.Export(ctx, &out, ledger.Query{}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if out.Len() > maxEntry || out.Len() < maxEntry*3/4 {
				t.Errorf("entry of %d bytes, want just under %d", out.Len(), maxEntry)
			}
			if !bytes.Contains(out.Bytes(), []byte(trace.TruncationMarker)) || !utf8.Valid(out.Bytes()) {
				t.Errorf("entry not cut cleanly")
			}
			// Nothing went to the value log.
			vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
			for _, f := range vlogs {
				if fi, _ := os.Stat(f); fi.Size() > 1024 {
					t.Errorf("%s holds %d bytes", filepath.Base(f), fi.Size())
				}
			}
		})
	}
}

// TestSessionIDPseudonym: a session id that is personal data (an e-mail
// address, a phone number) is stored as a pseudonym, the same for the same
// id, and a query or the lessons by the id as given still find its entries;
// an ordinary session id is stored as it is.
func TestSessionIDPseudonym(t *testing.T) {
	l, err := Open(t.TempDir(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, session := range []string{"ann.lee@example.com", "+86 138 0013 8000", "ann.lee@example.com", "web-7f3a"} {
		v := violation("loop", "trace-"+session)
		v.SessionID = session
		mustAppend(t, l, v)
	}
	for _, tt := range []struct {
		session string
		n       int
		stored  string // "" for a pseudonym
	}{
		{"ann.lee@example.com", 2, ""}, {"+86 138 0013 8000", 1, ""}, {"web-7f3a", 1, "web-7f3a"},
	} {
		got, err := l.Query(ctx, ledger.Query{SessionID: tt.session})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tt.n {
			t.Errorf("session %q: %d entries, want %d", tt.session, len(got), tt.n)
			continue
		}
		for _, e := range got {
			switch {
			case tt.stored != "" && e.SessionID != tt.stored:
				t.Errorf("session %q stored as %q", tt.session, e.SessionID)
			case tt.stored == "" && (!strings.HasPrefix(e.SessionID, "session-") || e.SessionID != got[0].SessionID):
				t.Errorf("session %q stored as %q, want one pseudonym", tt.session, e.SessionID)
			}
		}
		if lessons, err := l.Lessons(ctx, ledger.Query{SessionID: tt.session}); err != nil || len(lessons) != 1 || lessons[0].Count != tt.n {
			t.Errorf("lessons of session %q: %+v, %v", tt.session, lessons, err)
		}
	}
}
