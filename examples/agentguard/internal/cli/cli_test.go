package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	v := Verb{Name: "x", Synopsis: "[-n N] FILE...", MinArgs: 1, MaxArgs: 2, ArgName: "FILE"}
	for _, tt := range []struct {
		name   string
		args   []string
		pos    []string
		n      int
		code   int
		ok     bool
		stdout string
		stderr string
	}{
		{name: "flags first", args: []string{"-n", "3", "a"}, pos: []string{"a"}, n: 3, ok: true},
		{name: "flags after arguments", args: []string{"a", "-n", "3", "b"}, pos: []string{"a", "b"}, n: 3, ok: true},
		{name: "-- ends the flags", args: []string{"--", "-n"}, pos: []string{"-n"}, ok: true},
		{name: "help", args: []string{"-h"}, code: ExitPassed, stdout: "usage: agentguard x [-n N] FILE...\n"},
		{name: "missing", args: []string{"-n", "1"}, code: ExitUsage, stderr: "agentguard x: missing FILE\nusage: agentguard x [-n N] FILE...\n"},
		{name: "stray", args: []string{"a", "b", "c"}, code: ExitUsage, stderr: `agentguard x: unexpected argument "c"`},
		{name: "bad value", args: []string{"-n", "many", "a"}, code: ExitUsage, stderr: `invalid value "many" for flag -n`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := v.FlagSet()
			n := fs.Int("n", 0, "a number")
			var stdout, stderr bytes.Buffer
			pos, code, ok := v.Parse(fs, tt.args, &stdout, &stderr)
			if ok != tt.ok || code != tt.code || !slices.Equal(pos, tt.pos) || tt.ok && *n != tt.n {
				t.Errorf("Parse = %q, %d, %v, n %d; want %q, %d, %v, n %d", pos, code, ok, *n, tt.pos, tt.code, tt.ok, tt.n)
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}

// TestProgressPlain: off a terminal, 90 status updates become a line per
// tenth of the work and the first; a run cut short ends with its last status.
func TestProgressPlain(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, false)
	for i := 1; i <= 90; i++ {
		fmt.Fprintf(p, "\rguarded: %d/90 runs, 0 failed", i)
	}
	fmt.Fprintln(p)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 11 || lines[0] != "guarded: 1/90 runs, 0 failed" || lines[10] != "guarded: 90/90 runs, 0 failed" || strings.Contains(b.String(), "\r") {
		t.Errorf("%d lines:\n%s", len(lines), b.String())
	}
	b.Reset()
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(p, "\rguarded: %d/90 runs, 0 failed", i)
	}
	fmt.Fprintln(p)
	if got := b.String(); got != "guarded: 1/90 runs, 0 failed\nguarded: 5/90 runs, 0 failed\n" {
		t.Errorf("cut short: %q", got)
	}
}

func TestProgressTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, true)
	fmt.Fprint(p, "\rrun: 1/4 done\rrun: 4/4 done\n")
	if got, want := b.String(), "\r[#####...............] run: 1/4 done\r[####################] run: 4/4 done\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOpenInputGzip(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	io.WriteString(zw, "hello\n")
	zw.Close()
	for name, data := range map[string][]byte{"plain.txt": []byte("hello\n"), "packed.gz": z.Bytes(), "packed-without-suffix": z.Bytes()} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o600)
		in, err := OpenInput(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(in)
		in.Close()
		if err != nil || string(got) != "hello\n" || in.Name != p {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	in, err := OpenInput(WithStdin(context.Background(), strings.NewReader("from stdin")), "-")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(in); string(got) != "from stdin" || in.Name != "stdin" {
		t.Errorf("stdin: %q, %q", got, in.Name)
	}
}
