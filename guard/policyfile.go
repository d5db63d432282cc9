package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// maxPolicySize is the largest policy file LoadPolicy reads, in bytes.
const maxPolicySize = 16 << 20

// LoadPolicy reads a policy file: a JSON object that configures a Guard, for
// offline evaluation (the evaluate command's -policy flag) as for online
// use. It returns the Config the file describes; set the fields a file
// cannot hold (Ledger, Logger, Classifier, Rules, Invariants,
// Resilience.Fallback, and ToolPolicy.IsEmpty beyond empty_ok) on it before
// calling New. LoadPolicy is safe for concurrent use.
//
// The reading is strict, so that a typo never silently turns a rule off: an
// unknown key, a value of the wrong type, an unknown verdict, effect or rule
// name, a schema that is not valid JSON, or anything after the object is an
// error (a *Error with Op "policy") that names the key, such as
//
//	guard: policy: tools.send_email: unknown field "efect" (did you mean "effect"?)
//	guard: policy: empty_result: "ask" is not a verdict for empty results (want "clarify", "retry" or "handoff")
//	guard: policy: line 3, column 1: invalid character '}' looking for beginning of object key string
//
// Every key is optional and an absent key, like 0, false or "", means the
// default of the Config field it sets, so {} is the default guard. A file
// looks like this:
//
//	{
//	  "version": 1,
//	  "allowed_tools": ["search_contact", "get_quote_history", "send_email"],
//	  "loop_limit": 3,
//	  "max_steps": 25,
//	  "confirm_writes": false,
//	  "disable": ["max-steps"],
//	  "tools": {
//	    "get_webpage": {"effect": "read", "untrusted": true},
//	    "send_email":  {"effect": "write", "confirm": true,
//	                    "schema": {"type": "object", "required": ["to"]}},
//	    "search_kb":   {"retrieval": true, "timeout": "5s", "retries": 2}
//	  }
//	}
//
// The keys, and the Config field each one sets:
//
//	version                integer    the format version: 1 (the default)
//	allowed_tools          [string]   AllowedTools: the tool allow-list; absent or [] means the tools the run offered (Trace.Tools)
//	loop_limit             integer    LoopLimit: block the n-th identical call in a row; 0 means 3, negative disables the rule
//	max_steps              integer    MaxSteps: hand off after this many tool calls; 0 means 25, negative disables the rule
//	intents                [string]   Intents: the intents the agent serves; absent means any
//	min_intent_confidence  number     MinIntentConfidence, from 0 to 1; 0 means 0.6
//	empty_result           string     EmptyResult: "clarify" (the default), "retry" or "handoff"
//	min_similarity         number     MinSimilarity: refuse below this best retrieval score; 0 refuses only on no documents
//	route_similarity       object     RouteSimilarity: route name -> threshold, overriding min_similarity
//	json_routes            [string]   JSONRoutes: routes whose answers must be JSON
//	confirm_writes         boolean    ConfirmWrites: every state-changing call needs the user's confirmation
//	disable                [string]   Disable: built-in rules to leave out, by name (see below)
//	require_approval       [string]   RequireApproval: tools whose calls pause Run for a human
//	pass_score             integer    PassScore: the trajectory score a trace needs to pass; 0 means 80
//	memory                 object     Memory: {"budget": N} sets the card's token budget; {"off": true} turns the card off
//	penalty                integer    Penalty: points off the score per violation; 0 means 20
//	shadow                 boolean    Shadow: detect only, enforce nothing
//	max_retries            integer    MaxRetries: model retries after a Retry verdict; 0 means 1, negative never
//	refusal_template       string     RefusalTemplate; "" means the lexicon's, in the user's language
//	handoff_message        string     HandoffMessage; "" means the lexicon's, in the user's language
//	max_field              integer    MaxField: cap on recorded arguments and results, in bytes; 0 means the default
//	resilience             object     Resilience (below)
//	tools                  object     Tools: tool name -> tool policy (below)
//
// A tool policy (ToolPolicy):
//
//	effect      string    "read", "write", or "auto" / "" to infer it from the name's verb (see StateChanging)
//	untrusted   boolean   results carry third-party content (web pages, files, e-mails, messages, reviews)
//	confirm     boolean   a state-changing call needs the user's confirmation in the turn before
//	retrieval   boolean   results are documents with ids and scores (see Documents)
//	schema      object    the JSON schema of the arguments (see ValidateArguments); it must be valid
//	timeout     string    a Go duration such as "5s"; "" means Resilience.ToolTimeout
//	isolate     boolean   run each call on its own goroutine, abandoned at the timeout (the tool may ignore its context)
//	retries     integer   retries of a failed call; 0 means Resilience.ToolRetries, negative never
//	empty_ok    boolean   an empty result is the tool's normal answer (a "think" or "log" tool): the
//	                      empty-result gate ignores it (IsEmpty always reports false)
//	channel     string    the contact channel the tool reaches the user by ("sms", "call", "email", "push"), for the memory card's bans
//
// Resilience, durations as Go duration strings ("200ms", "30s", "2m"):
//
//	tool_timeout, model_timeout     string    0 or "" means 30s and 2m; negative means none
//	tool_retries, model_retries     integer   retries of read-only tool calls (0: none) and of model calls (0 means 2); negative, none
//	isolate_tools                   boolean   isolate every tool call (see Resilience.IsolateTools)
//	backoff                         string    "" means 200ms
//	breaker_failures                integer   0 means 5
//	breaker_open_for                string    "" means 30s
//
// The names disable accepts are those of the built-in rules: tool-allow-list,
// tool-arguments, loop, max-steps, intent-confidence, empty-result,
// retrieval-similarity, grounding, value-invariant, argument-provenance
// (which also reports injected-argument findings) and confirmation.
func LoadPolicy(r io.Reader) (Config, error) {
	p, err := readPolicy(r)
	if err != nil {
		return Config{}, &Error{Op: "policy", Err: err}
	}
	cfg, err := p.config()
	if err != nil {
		return Config{}, &Error{Op: "policy", Err: err}
	}
	return cfg, nil
}

// policyFile is the policy file's shape; the json tags are its keys.
type policyFile struct {
	Version             int                   `json:"version"`
	AllowedTools        []string              `json:"allowed_tools"`
	LoopLimit           int                   `json:"loop_limit"`
	MaxSteps            int                   `json:"max_steps"`
	Intents             []string              `json:"intents"`
	MinIntentConfidence float64               `json:"min_intent_confidence"`
	EmptyResult         string                `json:"empty_result"`
	MinSimilarity       float64               `json:"min_similarity"`
	RouteSimilarity     map[string]float64    `json:"route_similarity"`
	JSONRoutes          []string              `json:"json_routes"`
	ConfirmWrites       bool                  `json:"confirm_writes"`
	Disable             []string              `json:"disable"`
	RequireApproval     []string              `json:"require_approval"`
	Shadow              bool                  `json:"shadow"`
	MaxRetries          int                   `json:"max_retries"`
	RefusalTemplate     string                `json:"refusal_template"`
	HandoffMessage      string                `json:"handoff_message"`
	MaxField            int                   `json:"max_field"`
	PassScore           int                   `json:"pass_score"`
	Memory              *policyMemory         `json:"memory"`
	Penalty             int                   `json:"penalty"`
	Resilience          policyResilience      `json:"resilience"`
	Tools               map[string]policyTool `json:"tools"`
}

type policyMemory struct {
	Off    bool `json:"off"`
	Budget int  `json:"budget"`
}

type policyTool struct {
	Effect    string          `json:"effect"`
	Untrusted bool            `json:"untrusted"`
	Confirm   bool            `json:"confirm"`
	Retrieval bool            `json:"retrieval"`
	Schema    json.RawMessage `json:"schema"`
	Timeout   duration        `json:"timeout"`
	Isolate   bool            `json:"isolate"`
	Retries   int             `json:"retries"`
	EmptyOK   bool            `json:"empty_ok"`
	Channel   string          `json:"channel"`
}

type policyResilience struct {
	ToolTimeout     duration `json:"tool_timeout"`
	ModelTimeout    duration `json:"model_timeout"`
	IsolateTools    bool     `json:"isolate_tools"`
	ToolRetries     int      `json:"tool_retries"`
	ModelRetries    int      `json:"model_retries"`
	Backoff         duration `json:"backoff"`
	BreakerFailures int      `json:"breaker_failures"`
	BreakerOpenFor  duration `json:"breaker_open_for"`
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errWant
	}
	if s == "" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (want a Go duration such as \"30s\" or \"1m30s\")", s)
	}
	*d = duration(v)
	return nil
}

func (m *policyMemory) options() *MemoryOptions {
	if m == nil {
		return nil
	}
	return &MemoryOptions{Off: m.Off, Budget: m.Budget}
}

// neverEmpty is the IsEmpty of tools whose empty result is their normal answer.
func neverEmpty(string) bool { return false }

// readPolicy decodes the file strictly, with errors that name the key.
func readPolicy(r io.Reader) (*policyFile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPolicySize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPolicySize {
		return nil, fmt.Errorf("file larger than %d bytes", maxPolicySize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file (the smallest policy is {})")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, syntaxError(data, err)
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("%s: data after the policy object", position(data, int64(len(data)-len(rest))))
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", describeJSON(raw))
	}
	p := new(policyFile)
	if err := decodeStrict(raw, "", reflect.ValueOf(p).Elem()); err != nil {
		return nil, err
	}
	return p, nil
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s: %v", position(data, se.Offset-1), err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("unexpected end of file")
	}
	return err
}

// position turns a byte offset into "line L, column C".
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	unmarshalType  = reflect.TypeFor[json.Unmarshaler]()
	errWant        = errors.New("wrong type")
)

// decodeStrict decodes raw into v, refusing unknown keys; path names v in
// errors ("" for the file, "tools.send_email" for a tool).
func decodeStrict(raw json.RawMessage, path string, v reflect.Value) error {
	t := v.Type()
	if string(raw) == "null" {
		return nil // the default
	}
	switch {
	case t == rawMessageType:
		v.SetBytes(slices.Clone(raw))
		return nil
	case t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalType):
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return wrongType(path, t, raw)
		}
		fields := map[string]int{}
		for i := range t.NumField() {
			fields[jsonKey(t.Field(i))] = i
		}
		for _, k := range sortedKeys(m) {
			i, ok := fields[k]
			if !ok {
				return unknownField(path, k, sortedKeys(fields))
			}
			if err := decodeStrict(m[k], join(path, k), v.Field(i)); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() == reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return wrongType(path, t, raw)
		}
		v.Set(reflect.MakeMapWithSize(t, len(m)))
		for _, k := range sortedKeys(m) {
			e := reflect.New(t.Elem()).Elem()
			if err := decodeStrict(m[k], join(path, k), e); err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(k), e)
		}
		return nil
	case t.Kind() == reflect.Slice:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return wrongType(path, t, raw)
		}
		v.Set(reflect.MakeSlice(t, len(list), len(list)))
		for i, e := range list {
			if err := decodeStrict(e, fmt.Sprintf("%s[%d]", path, i), v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.Is(err, errWant) || errors.As(err, &te) {
			return wrongType(path, t, raw)
		}
		return fmt.Errorf("%s%v", at(path), err)
	}
	return nil
}

func jsonKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func wrongType(path string, t reflect.Type, raw json.RawMessage) error {
	return fmt.Errorf("%swant %s, got %s", at(path), describeType(t), describeJSON(raw))
}

// at prefixes an error message with the key it is about.
func at(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[duration]():
		return `a duration string such as "30s"`
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		return "an object of objects"
	case t.Kind() == reflect.Map:
		return "an object of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	}
	return "an object"
}

func describeJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "invalid JSON"
	}
	switch x := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return strconv.Quote(x)
	}
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func unknownField(path, key string, known []string) error {
	in := at(path)
	best, bestDist := "", 3 // suggest only close names
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Errorf("%sunknown field %q (did you mean %q?)", in, key, best)
	}
	return fmt.Errorf("%sunknown field %q (known: %s)", in, key, strings.Join(known, ", "))
}

// editDistance is the Levenshtein distance of a and b, in bytes; it gives
// up above 8, since only close names are worth suggesting.
func editDistance(a, b string) int {
	if d := len(a) - len(b); d > 8 || d < -8 || len(a) > 64 {
		return 9
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// config validates the decoded file and builds the Config.
func (p *policyFile) config() (Config, error) {
	if p.Version != 0 && p.Version != 1 {
		return Config{}, fmt.Errorf("version: unsupported version %d (want 1)", p.Version)
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"allowed_tools", p.AllowedTools}, {"intents", p.Intents}, {"json_routes", p.JSONRoutes}, {"require_approval", p.RequireApproval}} {
		if i := slices.Index(l.names, ""); i >= 0 {
			return Config{}, fmt.Errorf("%s[%d]: empty name", l.key, i)
		}
	}
	if c := p.MinIntentConfidence; c < 0 || c > 1 {
		return Config{}, fmt.Errorf("min_intent_confidence: %v is not between 0 and 1", c)
	}
	switch v := trace.Verdict(p.EmptyResult); v {
	case "", trace.Clarify, trace.Retry, trace.Handoff:
	default:
		return Config{}, fmt.Errorf(`empty_result: %q is not a verdict for empty results (want "clarify", "retry" or "handoff")`, v)
	}
	if p.MinSimilarity < 0 {
		return Config{}, fmt.Errorf("min_similarity: %v is negative", p.MinSimilarity)
	}
	for _, route := range sortedKeys(p.RouteSimilarity) {
		if route == "" {
			return Config{}, errors.New("route_similarity: empty route name")
		}
		if v := p.RouteSimilarity[route]; v < 0 {
			return Config{}, fmt.Errorf("route_similarity.%s: %v is negative", route, v)
		}
	}
	for i, name := range p.Disable {
		if !slices.Contains(BuiltinRules(), name) {
			return Config{}, fmt.Errorf("disable[%d]: %q is not a built-in rule (known: %s)", i, name, strings.Join(BuiltinRules(), ", "))
		}
	}
	if p.MaxField < 0 {
		return Config{}, fmt.Errorf("max_field: %d is negative", p.MaxField)
	}
	if f := p.Resilience.BreakerFailures; f < 0 || f > math.MaxUint32 {
		return Config{}, fmt.Errorf("resilience.breaker_failures: %d is out of range", f)
	}

	cfg := Config{
		Disable: p.Disable,
		Shadow:  p.Shadow,
		Memory:  p.Memory.options(),
		Resilience: Resilience{
			ToolTimeout:     time.Duration(p.Resilience.ToolTimeout),
			ModelTimeout:    time.Duration(p.Resilience.ModelTimeout),
			IsolateTools:    p.Resilience.IsolateTools,
			ToolRetries:     p.Resilience.ToolRetries,
			ModelRetries:    p.Resilience.ModelRetries,
			Backoff:         time.Duration(p.Resilience.Backoff),
			BreakerFailures: uint32(p.Resilience.BreakerFailures),
			BreakerOpenFor:  time.Duration(p.Resilience.BreakerOpenFor),
		},
		Gates: Gates{
			AllowedTools:        p.AllowedTools,
			LoopLimit:           p.LoopLimit,
			MaxSteps:            p.MaxSteps,
			Intents:             p.Intents,
			MinIntentConfidence: p.MinIntentConfidence,
			EmptyResult:         trace.Verdict(p.EmptyResult),
			MinSimilarity:       p.MinSimilarity,
			RouteSimilarity:     p.RouteSimilarity,
			JSONRoutes:          p.JSONRoutes,
			ConfirmWrites:       p.ConfirmWrites,
			RequireApproval:     p.RequireApproval,
			MaxRetries:          p.MaxRetries,
		},
		Answers: Answers{
			RefusalTemplate: p.RefusalTemplate,
			HandoffMessage:  p.HandoffMessage,
		},
		Observe: Observation{
			MaxField: p.MaxField,
		},
		Evaluation: Evaluation{
			PassScore: p.PassScore,
			Penalty:   p.Penalty,
		},
	}
	for _, name := range sortedKeys(p.Tools) {
		pt := p.Tools[name]
		path := "tools." + name
		if strings.TrimSpace(name) == "" {
			return Config{}, errors.New("tools: empty tool name")
		}
		tp := ToolPolicy{Untrusted: pt.Untrusted, Confirm: pt.Confirm, Retrieval: pt.Retrieval, Timeout: time.Duration(pt.Timeout), Isolate: pt.Isolate, Retries: pt.Retries, Channel: strings.ToLower(strings.TrimSpace(pt.Channel))}
		if pt.EmptyOK {
			tp.IsEmpty = neverEmpty
		}
		switch Effect(pt.Effect) {
		case EffectAuto, "auto":
		case EffectRead, EffectWrite:
			tp.Effect = Effect(pt.Effect)
		default:
			return Config{}, fmt.Errorf(`%s.effect: %q is not an effect (want "read", "write" or "auto")`, path, pt.Effect)
		}
		if len(pt.Schema) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, pt.Schema); err != nil {
				return Config{}, fmt.Errorf("%s.schema: %v", path, err)
			}
			if b.Bytes()[0] != '{' {
				return Config{}, fmt.Errorf("%s.schema: want an object, got %s", path, describeJSON(pt.Schema))
			}
			if _, err := compileSchema(b.Bytes()); err != nil {
				return Config{}, fmt.Errorf("%s.schema: %v", path, err)
			}
			tp.Schema = b.Bytes()
		}
		if cfg.Tools == nil {
			cfg.Tools = make(ToolPolicies, len(p.Tools))
		}
		cfg.Tools[name] = tp
	}
	return cfg, nil
}
