package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// The public trajectories in ../shared/corpus (see its README), read into
// traces: the folder sits beside the checkout and is not part of the
// module, so a test that needs it skips, saying why, when it is absent.

// CorpusDir returns the corpus folder, or skips the test.
func CorpusDir(t testing.TB) string {
	t.Helper()
	dir, err := SharedCorpus()
	if err != nil {
		t.Skipf("corpus: %v", err)
	}
	return dir
}

// moduleRoot walks up from the working directory to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Line is one line of a corpus file, as far as the tests read it.
type Line struct {
	TraceID           string    `json:"trace_id"`
	Domain            string    `json:"domain"`
	Model             string    `json:"model"`
	AllowedTools      []string  `json:"allowed_tools"`
	UserTurns         []string  `json:"user_turns"`
	Steps             []Step    `json:"steps"`
	AssistantMessages []Message `json:"assistant_messages"`
	Labels            Labels    `json:"labels"`
}

type Step struct {
	I                 int             `json:"i"`
	Actor             string          `json:"actor"`
	Action            string          `json:"action"`
	Params            json.RawMessage `json:"params"`
	Result            json.RawMessage `json:"result"`
	AfterUserTurn     int             `json:"after_user_turn"`
	Error             json.RawMessage `json:"error"`
	ResultTruncated   bool            `json:"result_truncated"`
	ContainsInjection bool            `json:"contains_injection"`
}

type Message struct {
	AfterUserTurn int    `json:"after_user_turn"`
	Text          string `json:"text"`
}

type Labels struct {
	Outcome          string  `json:"outcome"`
	Utility          *bool   `json:"utility"` // AgentDojo: the user's task was done
	AttackType       *string `json:"attack_type"`
	InjectionSuccess *bool   `json:"injection_success"`
	InjectedSteps    []int   `json:"derived_injected_steps"`
	UnexpectedWrites []struct {
		Step   int    `json:"step"`
		Action string `json:"action"`
	} `json:"derived_unexpected_write_actions"`
	// ExpectedActions are the calls the benchmark's gold trajectory makes
	// (τ), each a tool and its arguments.
	ExpectedActions []struct {
		Action string          `json:"action"`
		Params json.RawMessage `json:"params"`
	} `json:"expected_actions"`
}

// Run is a corpus line converted to a trace.
type Run struct {
	Line  Line
	Trace *trace.Trace
	// Step maps a corpus step's "i" to the index of its trace step.
	Step map[int]int
}

// ToTrace converts a corpus line into a trace:
//
//   - allowed_tools become Trace.Tools (names only): the allow-list;
//   - each agent step becomes a KindTool step, Args the JSON of its params,
//     Result its result text (Error too, when the corpus marks it an error
//     or the text says the call failed as trace.FailedToolText reads it),
//     Truncated when the corpus cut the result;
//   - each assistant message becomes a KindModel step named after the
//     model, in the user turn given by after_user_turn. The corpus does not
//     say where a turn's messages fall among its tool calls: the last one
//     is put after them (it is the reply that ended the turn) and the
//     others before them (the text that went with the tool calls);
//   - the simulated user's own tool calls in telecom (actor "user", on their
//     phone) are left out: they are not the agent's actions, and what the
//     user learned from them reaches the agent through the user's turns.
func (l Line) ToTrace() (*trace.Trace, map[int]int, error) {
	t := &trace.Trace{ID: l.TraceID, Route: l.Domain, UserTurns: l.UserTurns, Steps: []*trace.Step{}}
	for _, name := range l.AllowedTools {
		t.Tools = append(t.Tools, trace.ToolSpec{Name: name})
	}
	byTurn := map[int][]Message{}
	for _, m := range l.AssistantMessages {
		if m.AfterUserTurn < -1 || m.AfterUserTurn >= len(l.UserTurns) {
			return nil, nil, fmt.Errorf("assistant message after user turn %d of %d", m.AfterUserTurn, len(l.UserTurns))
		}
		byTurn[m.AfterUserTurn] = append(byTurn[m.AfterUserTurn], m)
	}
	stepOf := map[int]int{}
	add := func(s *trace.Step) {
		s.Index = len(t.Steps)
		t.Steps = append(t.Steps, s)
	}
	say := func(turn int, ms []Message) {
		for _, m := range ms {
			add(&trace.Step{Kind: trace.KindModel, Name: l.Model, Turn: turn, Result: m.Text})
		}
	}
	stepsIn := map[int][]Step{}
	for _, cs := range l.Steps {
		if cs.AfterUserTurn < -1 || cs.AfterUserTurn >= len(l.UserTurns) {
			return nil, nil, fmt.Errorf("step %d after user turn %d of %d", cs.I, cs.AfterUserTurn, len(l.UserTurns))
		}
		if cs.Actor == "agent" {
			stepsIn[cs.AfterUserTurn] = append(stepsIn[cs.AfterUserTurn], cs)
		}
	}
	for turn := -1; turn < len(l.UserTurns); turn++ {
		ms := byTurn[turn]
		if len(ms) > 0 {
			say(turn, ms[:len(ms)-1])
		}
		for _, cs := range stepsIn[turn] {
			args := "{}"
			if p := bytes.TrimSpace(cs.Params); len(p) > 0 && string(p) != "null" {
				var b bytes.Buffer
				if err := json.Compact(&b, p); err != nil {
					return nil, nil, fmt.Errorf("step %d: params: %v", cs.I, err)
				}
				args = b.String()
			}
			result, err := jsonText(cs.Result)
			if err != nil {
				return nil, nil, fmt.Errorf("step %d: result: %v", cs.I, err)
			}
			s := &trace.Step{Kind: trace.KindTool, Name: cs.Action, Turn: turn, Args: args, Result: result, Truncated: cs.ResultTruncated}
			if e := strings.TrimSpace(string(cs.Error)); e != "" && e != "null" && e != "false" {
				s.Error = result
				if e != "true" {
					s.Error, _ = jsonText(cs.Error)
				}
			} else if trace.FailedToolText(result) {
				s.Error = result // as trace.Import reads the same content ("Error: payment method not found")
			}
			stepOf[cs.I] = len(t.Steps)
			add(s)
		}
		if len(ms) > 0 {
			say(turn, ms[len(ms)-1:])
		}
	}
	return t, stepOf, nil
}

// jsonText returns a JSON string's value, other JSON compacted, null as "".
func jsonText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var b bytes.Buffer
	err := json.Compact(&b, raw)
	return b.String(), err
}

// LoadCorpus reads one file of the corpus, or skips the test.
func LoadCorpus(t testing.TB, name string) []Run {
	t.Helper()
	return LoadFile(t, filepath.Join(CorpusDir(t), name))
}

// LoadFile reads a file in the corpus format.
func LoadFile(t testing.TB, name string) []Run {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Run
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		tr, stepOf, err := l.ToTrace()
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", name, n, l.TraceID, err)
		}
		out = append(out, Run{Line: l, Trace: tr, Step: stepOf})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// SharedCorpus returns ../shared/corpus beside the module, if it is there.
func SharedCorpus() (string, error) {
	if RaceOn {
		// A corpus pass is one goroutine judging thousands of recorded
		// runs: nothing for the detector to check that the plain run does
		// not test, and minutes of its instrumentation (150-190 s a test).
		return "", errors.New("the corpus is read by the plain test run, not under the race detector: its passes are sequential")
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "agentdojo.jsonl")); err != nil {
		return "", fmt.Errorf("corpus not found at %s (it lives beside the checkout, not in the module): %v", dir, err)
	}
	return dir, nil
}
