package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
)

// TestConventions holds every verb to the command's conventions: -h prints
// the usage on stdout and exits 0; a stray argument or an unknown flag is a
// usage error (2); a bad input is an input error (2) that names the file
// and line; findings or a failed gate exit 1, too few samples 3; stdout
// carries results only; a failed run leaves nothing in the temporary
// directory.
func TestConventions(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.txt", "this is not JSON\nnor this\n")
	chat := write("chat.jsonl", `{"id":"c1","messages":[{"role":"user","content":"Send Li Wei his quotes."},{"role":"assistant","content":"Done."}]}`+"\n")
	badCases := write("bad-cases.jsonl", `{"id":"x"}`+"\n")
	const (
		evalTestdata     = "internal/evaluatecmd/testdata/"
		contevalTestdata = "internal/contevalcmd/testdata/"
		memoryTestdata   = "internal/memorycmd/testdata/"
	)
	ledgerDir := filepath.Join(dir, "demo", "ledger")
	if code := run(context.Background(), []string{"demo", "-quiet", "-out", filepath.Join(dir, "demo")}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("demo: exit %d", code)
	}

	type test struct {
		name   string
		args   []string
		want   int
		stdout string // a substring of stdout; "" checks nothing
		stderr string // a substring of stderr; "" checks nothing
	}
	var tests []test
	for _, v := range verbs {
		args := []string{v.name}
		switch v.name {
		case "ledger":
			args = append(args, "lessons")
		case "policy":
			args = append(args, "test")
		}
		tests = append(tests,
			test{v.name + " -h", []string{v.name, "-h"}, cli.ExitPassed, "usage: agentguard " + v.name, ""},
			test{v.name + " unknown flag", append(args, "-no-such-flag"), cli.ExitUsage, "", "flag provided but not defined: -no-such-flag"},
		)
	}
	for _, sub := range []string{"lessons", "query", "trace", "cases", "export"} {
		tests = append(tests, test{"ledger " + sub + " -h", []string{"ledger", sub, "-h"}, cli.ExitPassed, "usage: agentguard ledger " + sub, ""})
	}
	tests = append(tests, []test{
		// Stray arguments.
		{"health stray argument", []string{"health", "extra"}, cli.ExitUsage, "", `agentguard health: unexpected argument "extra"`},
		{"demo stray argument", []string{"demo", "-quiet", "extra"}, cli.ExitUsage, "", `unexpected argument "extra"`},
		{"conteval stray argument", []string{"conteval", "-traces", chat, "extra"}, cli.ExitUsage, "", `unexpected argument "extra"`},
		{"memory stray argument", []string{"memory", memoryTestdata + "sms_zh.jsonl", "extra"}, cli.ExitUsage, "", `unexpected argument "extra"`},
		{"evaluate no file", []string{"evaluate"}, cli.ExitUsage, "", "missing FILE"},
		{"ledger no subverb", []string{"ledger"}, cli.ExitUsage, "", "missing subverb"},
		{"ledger trace no id", []string{"ledger", "trace", ledgerDir}, cli.ExitUsage, "", "missing DIR and ID"},

		// Input errors name the file and line.
		{"evaluate garbage", []string{"evaluate", garbage}, cli.ExitUsage, "", garbage + ":1: unknown input format"},
		{"conteval garbage", []string{"conteval", "-traces", garbage}, cli.ExitUsage, "", garbage + ":1: unknown input format"},
		{"memory garbage", []string{"memory", garbage}, cli.ExitUsage, "", garbage + ":1: unknown input format"},
		{"health bad cases", []string{"health", "-cases", badCases}, cli.ExitUsage, "", "bad-cases.jsonl:1"},
		{"ledger not a ledger", []string{"ledger", "lessons", dir}, cli.ExitUsage, "", "agentguard ledger lessons: "},
		{"conteval bad since", []string{"conteval", "-traces", chat, "-since", "yesterday"}, cli.ExitUsage, "", `-since "yesterday": want an RFC 3339 time`},

		// Failed runs leave no temporary directory.
		{"demo bad model", []string{"demo", "-model", "nope:x"}, cli.ExitUsage, "", `unknown provider "nope"`},
		{"health bad model", []string{"health", "-model", "nope:x"}, cli.ExitUsage, "", `unknown provider "nope"`},

		// Verdicts.
		{"evaluate passed", []string{"evaluate", evalTestdata + "clean.jsonl"}, cli.ExitPassed, `"passed":1`, ""},
		{"evaluate findings", []string{"evaluate", evalTestdata + "traces.jsonl"}, cli.ExitFindings, `"failed":2`, ""},
		{"evaluate chat log, detected", []string{"evaluate", chat}, cli.ExitPassed, `"trace_id":"c1"`, ""},
		{"memory findings", []string{"memory", memoryTestdata + "sms_zh.jsonl"}, cli.ExitFindings, "# violations: 2", ""},
		{"conteval not enough samples", []string{"conteval", "-traces", chat, "-format", "openai"}, cli.ExitNotEnough, "not enough samples", ""},
		{"conteval red", []string{"conteval", "-traces", contevalTestdata + "traces.jsonl.gz", "-config", write("red.json", `{"version":"r","gate":{"floor":0.995}}`)}, cli.ExitFindings, "→ RED", ""},
		{"ledger lessons", []string{"ledger", "lessons", ledgerDir}, cli.ExitPassed, "RULE", ""},
		{"policy test passed", []string{"policy", "test", "../policies/tau-retail.yaml"}, cli.ExitPassed, "ok: ", ""},
		{"policy test failed", []string{"policy", "test", write("failing.yaml", "tools:\n  t:\n    checks:\n      - {name: c, require: 'false'}\ntests:\n  - {name: x, conversation: [{tool: t}]}\n")},
			cli.ExitFindings, "FAIL x", ""},
		{"policy test no tests", []string{"policy", "test", write("untested.yaml", "{}\n")}, cli.ExitUsage, "", "holds no test"},
		{"policy no subverb", []string{"policy"}, cli.ExitUsage, "", "want a subcommand: test"},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.args, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr.String())
			}
			if tt.want == cli.ExitUsage && stdout.Len() > 0 && !strings.HasPrefix(tt.name, "evaluate") {
				t.Errorf("a usage or input error wrote to stdout:\n%s", stdout.String())
			}
			if strings.Contains(stdout.String(), "\r") {
				t.Error("progress on stdout")
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("left in the temporary directory: %v", left)
				for _, e := range left {
					os.RemoveAll(filepath.Join(tmp, e.Name()))
				}
			}
		})
	}
}
