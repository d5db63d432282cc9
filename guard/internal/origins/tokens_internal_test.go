package origins

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// The tests below hold the hand-written scanners of the origins index to
// the plain forms they stand in for: phoneRun's regexp, and normToken and
// unpad as they read before their allocation-free paths, on random texts
// of the characters they treat specially.

func TestPhoneRunRandom(t *testing.T) {
	alpha := []string{"0", "1", "9", " ", "\t", "\n", "\v", "+", "(", ")", ".", "-", "–", "—", "a", "é", "中"}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 30000; n++ {
		var s string
		for k := r.IntN(30); k > 0; k-- {
			s += alpha[r.IntN(len(alpha))]
		}
		var runs []string
		rulekit.EachPhoneRun(s, func(m string) { runs = append(runs, m) })
		if want := phoneRun.FindAllString(s, -1); !slices.Equal(runs, want) {
			t.Fatalf("%q: got %q want %q", s, runs, want)
		}
	}
}

// unpadSlow is unpad without its shortcut.
func unpadSlow(tok string) string {
	if !strings.ContainsRune(tok, '0') {
		return tok
	}
	var b strings.Builder
	for i := 0; i < len(tok); {
		if tok[i] < '0' || tok[i] > '9' {
			b.WriteByte(tok[i])
			i++
			continue
		}
		j := i
		for j < len(tok) && tok[j] >= '0' && tok[j] <= '9' {
			j++
		}
		run := tok[i:j]
		if len(run) <= 6 {
			if run = strings.TrimLeft(run, "0"); run == "" {
				run = "0"
			}
		}
		b.WriteString(run)
		i = j
	}
	return b.String()
}

func TestUnpadRandom(t *testing.T) {
	alpha := []string{"0", "0", "0", "1", "9", "a", "-", "é"}
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 30000; n++ {
		var s string
		for k := r.IntN(14); k > 0; k-- {
			s += alpha[r.IntN(len(alpha))]
		}
		if got, want := unpad(s), unpadSlow(s); got != want {
			t.Fatalf("%q: got %q want %q", s, got, want)
		}
	}
}

// normTokenSlow is normToken without its ASCII path.
func normTokenSlow(tok string) string {
	if plainToken(tok) {
		return unpadSlow(tok)
	}
	tok = strings.TrimRight(tok, ".:,/-")
	tok = strings.TrimLeft(tok, ".:/") // "见：www.example" folds to ":www.example"
	tok = strings.TrimPrefix(strings.TrimPrefix(tok, "https://"), "http://")
	tok = strings.TrimPrefix(tok, "www.")
	out := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', '#', '/', ':', '+':
			return -1
		}
		return unicode.ToLower(r)
	}, tok)
	out = unpadSlow(out)
	if utf8.RuneCountInString(out) < 2 {
		if out >= "0" && out <= "9" && len(out) == 1 {
			return out
		}
		return ""
	}
	return out
}

func TestNormTokenRandom(t *testing.T) {
	alpha := []string{"0", "0", "1", "9", "a", "Z", "-", "_", ".", "#", "/", ":", "+", "@", "é", "É", "İ", "https://", "www.", "http"}
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 50000; n++ {
		var s string
		for k := r.IntN(12); k > 0; k-- {
			s += alpha[r.IntN(len(alpha))]
		}
		if n%1000 == 0 {
			s = strings.Repeat(s, 8)
		}
		if got, want := normToken(s), normTokenSlow(s); got != want {
			t.Fatalf("%q: got %q want %q", s, got, want)
		}
	}
}

func FuzzNormToken(f *testing.F) {
	for _, s := range []string{"A09", "order-003", "https://www.Example.com/", "mia_li_3668", "2024-05-15", "0", "00", "Ünïcode-007", "+86 138"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normToken(s), normTokenSlow(s); got != want {
			t.Errorf("normToken(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkNormToken is the folding of the tokens a support chat's reads
// return — an order id, an e-mail, an invoice number, a link — against
// normTokenSlow.
func BenchmarkNormToken(b *testing.B) {
	toks := []string{"A1001", "c-A1006@example.com", "INV-A1006", "https://www.example.com/orders/", "shipped"}
	for _, c := range []struct {
		name string
		fn   func(string) string
	}{{"fast", normToken}, {"slow", normTokenSlow}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, t := range toks {
					c.fn(t)
				}
			}
		})
	}
}
