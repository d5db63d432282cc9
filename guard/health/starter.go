package health

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/tmc/langchaingo/llms"
)

// ReadTools reads tool definitions: a JSON array of tools as OpenAI's API
// and langchaingo's llms.Tool give them ({"type": "function", "function":
// {"name", "description", "parameters"}}), or of the function objects
// alone. A tool without a name, or two of one name, is an error.
func ReadTools(r io.Reader, source string) ([]llms.Tool, error) {
	data, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, &Error{Op: "tools", Err: err}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Op: "tools", Err: fmt.Errorf("%s: want a JSON array of tools: %v", source, err)}
	}
	var out []llms.Tool
	seen := map[string]bool{}
	for i, b := range raw {
		var t llms.Tool
		if err := json.Unmarshal(b, &t); err != nil || t.Function == nil {
			var f llms.FunctionDefinition
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, &Error{Op: "tools", Err: fmt.Errorf("%s: tool %d: %v", source, i, err)}
			}
			t = llms.Tool{Type: "function", Function: &f}
		}
		name := t.Function.Name
		switch {
		case name == "":
			return nil, &Error{Op: "tools", Err: fmt.Errorf("%s: tool %d has no name", source, i)}
		case seen[name]:
			return nil, &Error{Op: "tools", Err: fmt.Errorf("%s: tool %q is defined twice", source, name)}
		}
		seen[name] = true
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, &Error{Op: "tools", Err: fmt.Errorf("%s: no tool", source)}
	}
	return out, nil
}

// StarterSet writes a golden set shaped as the method asks — 10 normal,
// 10 boundary and 10 adversarial cases, the last adversarial one a
// conversation of 16 turns — from an agent's tools, for a person to fill
// in. Each case's turns say, in brackets, what the user should say; its
// trajectory expects the tool it exercises with the tool's required
// arguments (at least that call, the argument values to fill in); a case
// about a tool that changes state (its name starts with a write verb:
// update_, cancel_, send_…) is where a negation or a changed condition is
// tried. No case has a last_verified date: each stays stale until a person
// has written and checked it, so "health -strict" refuses the set until
// then.
func StarterSet(tools []llms.Tool) []replay.Case {
	var reads, writes []llms.Tool
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		if detect.IsWriteVerb(detect.Default(), t.Function.Name) {
			writes = append(writes, t)
		} else {
			reads = append(reads, t)
		}
	}
	all := slices.Concat(reads, writes)
	if len(all) == 0 {
		return nil
	}
	pick := func(ts []llms.Tool, i int) llms.Tool {
		if len(ts) == 0 {
			ts = all
		}
		return ts[i%len(ts)]
	}
	var cases []replay.Case
	add := func(cat replay.Category, n int, kind, title string, t llms.Tool, turns []string, tags ...string) {
		c := replay.Case{
			ID:       fmt.Sprintf("%c%02d", strings.ToUpper(string(cat))[0], n),
			Category: cat,
			Title:    title + ": " + t.Function.Name,
			Turns:    turns,
			Trajectory: &replay.Trajectory{Match: replay.TrajectorySuperset, Args: replay.ArgsSuperset,
				Calls: []replay.Call{{Name: t.Function.Name, Args: requiredArgs(t)}}},
			Tags: append([]string{"todo", kind}, tags...),
		}
		cases = append(cases, c)
	}
	describe := func(t llms.Tool) string {
		d := strings.TrimSpace(t.Function.Description)
		if d == "" {
			d = t.Function.Name
		}
		if req := required(t); len(req) > 0 {
			d += ", giving " + strings.Join(req, " and ")
		}
		return d
	}
	for i := range replay.PerCategory {
		t := all[i%len(all)]
		add(replay.Normal, i+1, "plain", "Plain request", t,
			[]string{"[a plain request: " + describe(t) + "]"})
	}
	boundary := []struct{ kind, say string }{
		{"vague", "a vague request that could mean this or another tool"},
		{"multi-fact", "several facts in one message, the ones this call needs buried among the others"},
		{"long-input", "a very long message, over 200 words, with an old value first and the current one last"},
		{"rare-term", "a rare or regional term for what this tool does"},
		{"multi-request", "two requests in one sentence, this one second"},
	}
	for i := range replay.PerCategory {
		b, t := boundary[i%len(boundary)], pick(all, i)
		add(replay.Boundary, i+1, b.kind, "Boundary, "+b.kind, t,
			[]string{"[" + b.say + ": " + describe(t) + "]"})
	}
	adversarial := []struct{ kind, say string }{
		{"leading", "a leading question that presumes a wrong answer"},
		{"negation", "a negation: do not do the other thing, only this"},
		{"pushing", "the same request pushed again after a refusal or a question"},
		{"changed-condition", "a condition given, then changed in a later turn"},
	}
	for i := range replay.PerCategory - 1 {
		a := adversarial[i%len(adversarial)]
		t := pick(writes, i)
		turns := []string{"[" + a.say + ": " + describe(t) + "]"}
		switch a.kind {
		case "pushing":
			turns = append(turns, "[the same request again, insisting]")
		case "changed-condition":
			turns = append(turns, "[the condition changed: a new value for one of the arguments]")
		}
		add(replay.Adversarial, i+1, a.kind, "Adversarial, "+a.kind, t, turns)
	}
	long := make([]string, 0, 16)
	long = append(long, "[a greeting and who the user is]", "[a constraint to keep for the whole conversation: a channel not to use, a new address]")
	for i := 0; len(long) < 15; i++ {
		long = append(long, "[a request: "+describe(all[i%len(all)])+"]")
	}
	long = append(long, "[a last request that the constraint of turn 1 bears on]")
	add(replay.Adversarial, replay.PerCategory, "long-conversation", "Long conversation, a constraint from turn 1 kept to the end", pick(writes, 0), long, "memory")
	return cases
}

// required returns the names of t's required parameters.
func required(t llms.Tool) []string {
	var schema struct {
		Required []string `json:"required"`
	}
	b, err := json.Marshal(t.Function.Parameters)
	if err == nil {
		_ = json.Unmarshal(b, &schema)
	}
	return schema.Required
}

// requiredArgs returns an argument object with t's required parameters,
// each to be filled in: {"order_id": "[order_id]"}.
func requiredArgs(t llms.Tool) json.RawMessage {
	m := map[string]string{}
	for _, p := range required(t) {
		m[p] = "[" + p + "]"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m)
	return bytes.TrimSpace(b.Bytes())
}

// WriteStarterSet writes StarterSet(tools) to w, one case a line.
func WriteStarterSet(w io.Writer, tools []llms.Tool) error {
	cases := StarterSet(tools)
	if len(cases) == 0 {
		return &Error{Op: "starter", Err: fmt.Errorf("no tool to write cases for")}
	}
	for _, c := range cases {
		if err := replay.WriteCase(w, c); err != nil {
			return err
		}
	}
	return nil
}

// Init is the command "health init -tools FILE [-o GOLDEN.jsonl]": it
// writes the starter set of the tools FILE defines (ReadTools) to
// GOLDEN.jsonl, or to stdout without -o, and refuses to overwrite a file
// that exists. It returns the exit status: 0 written, 2 a bad flag or
// input.
func Init(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tools := fs.String("tools", "", "the agent's tool definitions, a JSON array (OpenAI's format, or the function objects)")
	out := fs.String("o", "", "write the golden set to this `FILE` (default: stdout); an existing file is not overwritten")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: health init -tools FILE [-o GOLDEN.jsonl]\n\nWrites a starter golden set shaped as the method asks (10 normal, 10 boundary,\n10 adversarial cases, one conversation of 16 turns) from the agent's tools,\nfor a person to fill in: the bracketed turns and argument values are theirs\nto write, and each case stays stale until its last_verified date is set.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitPassed
		}
		return ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "health init: %v\n", err)
		return ExitUsage
	}
	if *tools == "" || fs.NArg() > 0 {
		fs.Usage()
		return ExitUsage
	}
	f, err := os.Open(*tools)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	ts, err := ReadTools(f, *tools)
	if err != nil {
		return fail(err)
	}
	if *out == "" {
		if err := WriteStarterSet(stdout, ts); err != nil {
			return fail(err)
		}
		return ExitPassed
	}
	var b bytes.Buffer
	if err := WriteStarterSet(&b, ts); err != nil {
		return fail(err)
	}
	file, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fail(err)
	}
	if _, err := file.Write(b.Bytes()); err != nil {
		file.Close()
		os.Remove(*out)
		return fail(err)
	}
	if err := file.Close(); err != nil {
		os.Remove(*out)
		return fail(err)
	}
	fmt.Fprintf(stdout, "wrote %d cases to %s: fill in the bracketed turns and arguments, add the answers' elements, then set last_verified\n", len(StarterSet(ts)), *out)
	return ExitPassed
}
