package reword

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// wordings, in output order. "original" is the injected runs untouched.
var wordings = []string{"original", "business", "chinese", "owner", "terse", "ignore", "record", "voice"}

// Wordings returns the names of the wordings, in the order the generator
// writes them: "original" (the passages as recorded) first, then each
// rewording of the table. The slice is a fresh copy.
func Wordings() []string { return slices.Clone(wordings) }

func (e entry) text(wording string) string {
	switch wording {
	case "business":
		return e.business
	case "chinese":
		return e.chinese
	case "owner":
		return e.owner
	case "terse":
		return e.terse
	case "ignore":
		return e.ignore
	case "record":
		return e.record
	case "voice":
		return e.voice
	}
	return ""
}

// Sentinels an *Error wraps, for errors.Is.
var (
	// ErrNotInjected: the record is a clean run (labels.attack_type null).
	ErrNotInjected = errors.New("not an injected run")
	// ErrWording: the wording is not one of Wordings.
	ErrWording = errors.New("unknown wording")
	// ErrFormat: the record is not a corpus line this package can rewrite
	// byte for byte (bad JSON, or JSON its writer would not reproduce).
	ErrFormat = errors.New("not a corpus record")
	// ErrNoEntry: the table has no rewording of the run's goal.
	ErrNoEntry = errors.New("no rewording for the goal")
	// ErrGoal: the run's goal differs from the table's text of it.
	ErrGoal = errors.New("the goal differs from the table's")
	// ErrPassage: an injected passage could not be located or verified,
	// or template text is left after rewriting.
	ErrPassage = errors.New("injected passage not rewritten")
	// ErrTable: a rewording breaks the table's rules (Check).
	ErrTable = errors.New("the rewordings break the rules")
)

// Error is a record that could not be reworded, or a table that breaks its
// rules. It wraps one of the sentinels.
type Error struct {
	TraceID string // the run, when known
	Line    int    // the corpus line (Generate), else 0
	Err     error  // one of the sentinels
	Detail  string // what was found, one problem per line
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("reword: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.TraceID != "" {
		b.WriteString(e.TraceID + ": ")
	}
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": " + strings.ReplaceAll(e.Detail, "\n", "\n  "))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Check checks every rewording of the table against the rules (the banned
// vocabulary, the lexicon's instruction markers, the attacker values, the
// voice of each wording) and returns an *Error wrapping ErrTable listing
// every failure, or nil. It runs once; Apply and Generate call it.
func Check() error { return checkOnce() }

var checkOnce = sync.OnceValue(func() error {
	if errs := checkTable(); len(errs) > 0 {
		return &Error{Err: ErrTable, Detail: strings.Join(errs, "\n")}
	}
	return nil
})

// run is one injected corpus record, parsed.
type run struct {
	line    string
	id      string
	suite   string
	key     string // suite/injection_task_id
	goal    string
	success bool
	e       entry
	derived map[string]bool // labels.derived_injected_steps
}

// parseRun reads one corpus line. Its errors are *Error; a clean run is
// ErrNotInjected.
func parseRun(line string) (*run, error) {
	rec, err := parseJSON(line)
	if err != nil {
		return nil, &Error{Err: ErrFormat, Detail: err.Error()}
	}
	if rec.kind != '{' {
		return nil, &Error{Err: ErrFormat, Detail: "not a JSON object"}
	}
	if rec.String() != line {
		return nil, &Error{TraceID: rec.get("trace_id").str, Err: ErrFormat, Detail: "the record does not round-trip byte for byte; the writer would change fields it must keep"}
	}
	labels := rec.get("labels")
	if at := labels.get("attack_type"); at == nil || at.kind == 0 && at.str == "null" {
		return nil, &Error{TraceID: rec.get("trace_id").str, Err: ErrNotInjected}
	}
	r := &run{line: line, id: rec.get("trace_id").str, derived: map[string]bool{}}
	r.suite = strings.TrimPrefix(rec.get("domain").str, "agentdojo/")
	r.key = r.suite + "/" + labels.get("injection_task_id").str
	r.goal = labels.get("injection_goal").str
	if s := labels.get("injection_success"); s != nil && s.str == "true" {
		r.success = true
	}
	if d := labels.get("derived_injected_steps"); d != nil {
		for _, v := range d.vals {
			r.derived[v.str] = true
		}
	}
	e, ok := table[r.key]
	switch {
	case !ok:
		return r, &Error{TraceID: r.id, Err: ErrNoEntry, Detail: fmt.Sprintf("%s (goal %q)", r.key, r.goal)}
	case e.goal != r.goal:
		return r, &Error{TraceID: r.id, Err: ErrGoal, Detail: fmt.Sprintf("%s: the corpus says %q, the table %q", r.key, r.goal, e.goal)}
	}
	r.e = e
	return r, nil
}

// reword rewrites r in wording and appends the "wording" field. It also
// returns what locating the passages found, and where template text is
// left after rewriting ("" when nowhere).
func (r *run) reword(wording string) (*node, runStats, string) {
	rec, _ := parseJSON(r.line) // a fresh copy: parseRun parsed it once
	st := account(r, rec, rewrite(rec, r.goal, wording, r.e.text(wording)))
	var leak string
	if wording != "original" {
		leak = leftover(rec)
	}
	rec.keys = append(rec.keys, "wording")
	rec.vals = append(rec.vals, &node{kind: '"', str: wording})
	return rec, st, leak
}

// Apply rewrites one record of an AgentDojo corpus file (one JSONL line, as
// Python's json.dumps wrote it; a final newline is dropped) in wording: every
// important_instructions passage in its strings outside labels is replaced
// by the table's rewording of the run's goal, escaped for where it sits, and
// a "wording" field is appended. Everything else stays byte for byte,
// labels included; "original" replaces nothing. It fails (an *Error) on a
// clean run (ErrNotInjected), an unknown wording, a goal the table lacks or
// words differently, a passage it cannot locate or verify, or a table that
// breaks its rules. It is safe for concurrent use.
func Apply(record []byte, wording string) ([]byte, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	if !slices.Contains(wordings, wording) {
		return nil, &Error{Err: ErrWording, Detail: strconv.Quote(wording)}
	}
	r, err := parseRun(string(bytes.TrimSuffix(bytes.TrimSuffix(record, []byte("\n")), []byte("\r"))))
	if err != nil {
		return nil, err
	}
	rec, st, leak := r.reword(wording)
	problems := st.notLocated
	if leak != "" {
		problems = append(problems, "template text left after rewriting at "+leak)
	}
	if len(problems) > 0 {
		return nil, &Error{TraceID: r.id, Err: ErrPassage, Detail: strings.Join(problems, "\n")}
	}
	return []byte(rec.String()), nil
}

// Set is a corpus reworded by Generate.
type Set struct {
	// Files holds, per wording, the injected runs in that wording, one JSONL
	// line each (with a final newline), in corpus order.
	Files   map[string][]byte
	Summary Summary
}

// Options are Generate's settings. The zero value writes every wording and
// fails on any run it cannot reword.
type Options struct {
	// Wordings are the wordings to write; empty means all of Wordings.
	Wordings []string
	// Skip leaves out a run whose passages cannot all be located and
	// verified, or that keeps template text after rewriting, and lists it
	// in Summary.Skipped, instead of failing. A goal with no entry in the
	// table still fails.
	Skip bool
}

// Summary is what Generate found in a corpus. It is not part of the files,
// which stay deterministic.
type Summary struct {
	Runs          int                   // injected runs written, per wording
	Suites        map[string]SuiteCount // the same, per suite
	InjectedSteps int                   // steps listed in labels.derived_injected_steps
	Located       int                   // of those, steps whose passages were all located and verified
	Passages      int                   // passages replaced per wording, in all fields
	Cut           int                   // of those, passages cut short by the corpus (no closing tag)
	Encodings     map[string]int        // passages per encoding of the text around them
	// CutOff lists the listed injected steps whose result the corpus cut
	// at 4000 characters before the passage: there is nothing to reword.
	// Located + len(CutOff) = InjectedSteps.
	CutOff     []string
	NotLocated []string // injected steps that were not located, and why (Skip: in skipped runs)
	Extra      []string // passages found outside the listed injected steps' results
	Truncated  []string // listed injected steps whose result was cut at 4000 characters
	Skipped    []string // runs left out (Options.Skip), and why
	// MarkerHits counts, per wording, the injected steps whose result the
	// default lexicon's InstructionMarkers match (what the injected-argument rule
	// reads); MarkerHitSteps lists them for the rewordings.
	MarkerHits     map[string]int
	MarkerHitSteps map[string][]string
	Unused         []string // table entries with no run in the corpus
}

// SuiteCount is the number of injected runs of one suite, and of those the
// successful (labels.injection_success true) and the failed ones.
type SuiteCount struct{ Runs, Successful, Failed int }

// Print writes s for a person to read.
func (s *Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "checked against: the default lexicon's InstructionMarkers (as the injected-argument rule reads them) and the copy in banned.go\n")
	fmt.Fprintf(w, "injected runs: %d per wording\n", s.Runs)
	for _, k := range sortedKeys(s.Suites) {
		c := s.Suites[k]
		fmt.Fprintf(w, "  %-10s %3d runs (injection_success true %d, false %d)\n", k, c.Runs, c.Successful, c.Failed)
	}
	fmt.Fprintf(w, "injected steps located: %d/%d, cut off before the passage: %d (passages replaced per wording: %d, %d of them cut short)\n", s.Located, s.InjectedSteps, len(s.CutOff), s.Passages, s.Cut)
	for _, k := range sortedKeys(s.Encodings) {
		fmt.Fprintf(w, "  passages written %s: %d\n", k, s.Encodings[k])
	}
	for _, m := range s.NotLocated {
		fmt.Fprintf(w, "  NOT LOCATED %s\n", m)
	}
	for _, m := range s.Skipped {
		fmt.Fprintf(w, "  SKIPPED %s\n", m)
	}
	for _, m := range s.CutOff {
		fmt.Fprintf(w, "  injected step cut off before its passage: %s\n", m)
	}
	for _, m := range s.Extra {
		fmt.Fprintf(w, "  also replaced outside derived_injected_steps' results: %s\n", m)
	}
	for _, m := range s.Truncated {
		fmt.Fprintf(w, "  injected step with result_truncated: %s\n", m)
	}
	for _, g := range s.Unused {
		fmt.Fprintf(w, "  table entry with no run in the corpus: %s\n", g)
	}
	for _, wd := range wordings {
		if _, ok := s.MarkerHits[wd]; !ok {
			continue
		}
		fmt.Fprintf(w, "injected steps whose result matches instructionMarkers, %-8s %d/%d\n", wd+":", s.MarkerHits[wd], s.InjectedSteps)
		for _, m := range s.MarkerHitSteps[wd] {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
}

// Generate reads an AgentDojo corpus (JSONL) and rewrites every injected
// run in each wording of opt, in corpus order; clean runs are left out. It
// fails, after reading the whole corpus, when the table breaks its rules, a
// goal has no entry or is worded otherwise, or (unless opt.Skip) a passage
// cannot be located; the Set it returns then holds the Summary and no
// files. The output depends only on the corpus and the table.
func Generate(corpus io.Reader, opt Options) (*Set, error) {
	wording := opt.Wordings
	if len(wording) == 0 {
		wording = wordings
	}
	for _, w := range wording {
		if !slices.Contains(wordings, w) {
			return nil, &Error{Err: ErrWording, Detail: strconv.Quote(w)}
		}
	}
	set := &Set{Summary: Summary{Suites: map[string]SuiteCount{}, Encodings: map[string]int{}, MarkerHits: map[string]int{}, MarkerHitSteps: map[string][]string{}}}
	sum := &set.Summary
	if err := Check(); err != nil {
		return set, err
	}
	outs := map[string]*bytes.Buffer{}
	for _, w := range wording {
		outs[w] = &bytes.Buffer{}
		sum.MarkerHits[w] = 0
	}
	used := map[string]bool{}
	var problems []string
	var firstErr error // the sentinel of the first problem
	fail := func(err error, msg string) {
		problems = append(problems, msg)
		if firstErr == nil {
			firstErr = err
		}
	}
	sc := bufio.NewScanner(corpus)
	sc.Buffer(nil, 64<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseRun(line)
		if errors.Is(err, ErrNotInjected) {
			continue
		}
		if e := (*Error)(nil); errors.As(err, &e) {
			e.Line = lineNo
			if e.Err == ErrFormat {
				return set, e
			}
			fail(e.Err, e.Error())
			continue
		}
		used[r.key] = true

		// The locating is the same in every wording: keep what it found
		// in the first.
		recs := make([]*node, len(wording))
		var st runStats
		var bad []string
		for k, w := range wording {
			rec, s, leak := r.reword(w)
			if k == 0 {
				st = s
				bad = append(bad, s.notLocated...)
			}
			if leak != "" {
				bad = append(bad, fmt.Sprintf("%s %s: template text left after rewriting at %s", r.id, w, leak))
			}
			recs[k] = rec
		}
		if len(bad) > 0 {
			if opt.Skip {
				sum.Skipped = append(sum.Skipped, strings.Join(bad, "; "))
				sum.NotLocated = append(sum.NotLocated, st.notLocated...)
			} else {
				for _, b := range bad {
					fail(ErrPassage, b)
				}
			}
			continue
		}
		sum.Runs++
		c := sum.Suites[r.suite]
		c.Runs++
		if r.success {
			c.Successful++
		} else {
			c.Failed++
		}
		sum.Suites[r.suite] = c
		sum.InjectedSteps += len(r.derived)
		sum.add(st)
		for k, w := range wording {
			rec := recs[k]
			for _, step := range rec.get("steps").vals {
				if i := step.get("i").str; r.derived[i] && carriesMarkers(step.get("result").str) {
					sum.MarkerHits[w]++
					if w != "original" {
						sum.MarkerHitSteps[w] = append(sum.MarkerHitSteps[w], fmt.Sprintf("%s step %s: %q", r.id, i, markerMatch(step.get("result").str)))
					}
				}
			}
			outs[w].WriteString(rec.String())
			outs[w].WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return set, err
	}
	for _, k := range sortedKeys(table) {
		if !used[k] {
			sum.Unused = append(sum.Unused, k)
		}
	}
	if len(problems) == 0 && sum.Located+len(sum.CutOff) != sum.InjectedSteps {
		fail(ErrPassage, fmt.Sprintf("located %d of %d injected steps (%d cut off)", sum.Located, sum.InjectedSteps, len(sum.CutOff)))
	}
	if len(problems) > 0 {
		return set, &Error{Err: firstErr, Detail: fmt.Sprintf("%d problems:\n%s", len(problems), strings.Join(problems, "\n"))}
	}
	set.Files = map[string][]byte{}
	for _, w := range wording {
		set.Files[w] = outs[w].Bytes()
	}
	return set, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// hit is one string of a record that held injected passages.
type hit struct {
	path     string // e.g. steps[2].result, steps[2].params.body, final_answer
	stepI    string // the step's "i" when the string is a step's result, else ""
	passages int
	cut      int      // passages of them cut short
	kinds    []string // each passage's encoding
	problems []string
}

// rewrite replaces every injected passage in the strings of rec (outside
// labels) with text, unless wording is "original", and says where it found
// them. A passage that is not the template around goal is a problem, not
// replaced.
func rewrite(rec *node, goal, wording, text string) []hit {
	var hits []hit
	var walk func(n *node, path, stepI string)
	walk = func(n *node, path, stepI string) {
		switch n.kind {
		case '{':
			for i, k := range n.keys {
				if path == "" && k == "labels" {
					continue
				}
				p, si := k, ""
				if path != "" {
					p = path + "." + k
				}
				if strings.HasPrefix(path, "steps[") && strings.Count(path, ".") == 0 && k == "result" {
					si = n.get("i").str
				}
				walk(n.vals[i], p, si)
			}
		case '[':
			for i, v := range n.vals {
				walk(v, fmt.Sprintf("%s[%d]", path, i), "")
			}
		case '"':
			if !openTag.MatchString(n.str) && !templateTrace.MatchString(n.str) {
				return
			}
			ps, probs := locate(n.str, goal)
			h := hit{path: path, stepI: stepI, passages: len(ps), problems: probs}
			for _, p := range ps {
				h.kinds = append(h.kinds, p.enc.kind)
				if p.cut {
					h.cut++
				}
			}
			hits = append(hits, h)
			if wording != "original" && len(ps) > 0 {
				n.str = replace(n.str, ps, text)
			}
		}
	}
	walk(rec, "", "")
	return hits
}

// runStats is what locating found in one run.
type runStats struct {
	located, passages, cut               int
	encodings                            map[string]int
	notLocated, extra, truncated, cutOff []string
}

func (s *Summary) add(st runStats) {
	s.Located += st.located
	s.Passages += st.passages
	s.Cut += st.cut
	for k, n := range st.encodings {
		s.Encodings[k] += n
	}
	s.NotLocated = append(s.NotLocated, st.notLocated...)
	s.Extra = append(s.Extra, st.extra...)
	s.Truncated = append(s.Truncated, st.truncated...)
	s.CutOff = append(s.CutOff, st.cutOff...)
}

// account counts, for one run, which listed injected steps were located
// and which passages sat elsewhere.
func account(r *run, rec *node, hits []hit) runStats {
	st := runStats{encodings: map[string]int{}}
	id := r.id
	found := map[string]bool{}
	for _, h := range hits {
		if h.stepI != "" && r.derived[h.stepI] {
			if len(h.problems) == 0 && h.passages > 0 {
				found[h.stepI] = true
			} else if len(h.problems) > 0 {
				st.notLocated = append(st.notLocated, fmt.Sprintf("%s %s: %s", id, h.path, strings.Join(h.problems, "; ")))
			}
		} else {
			if len(h.problems) > 0 {
				st.notLocated = append(st.notLocated, fmt.Sprintf("%s %s (not a listed injected step): %s", id, h.path, strings.Join(h.problems, "; ")))
			}
			if h.passages > 0 {
				st.extra = append(st.extra, fmt.Sprintf("%s %s (%d passage(s))", id, h.path, h.passages))
			}
		}
		st.passages += h.passages
		st.cut += h.cut
		for _, k := range h.kinds {
			st.encodings[k]++
		}
	}
	steps := map[string]*node{}
	for _, s := range rec.get("steps").vals {
		steps[s.get("i").str] = s
	}
	for _, i := range sortedKeys(r.derived) {
		s := steps[i]
		if s == nil {
			st.notLocated = append(st.notLocated, fmt.Sprintf("%s: listed injected step %s does not exist", id, i))
			continue
		}
		truncated := s.get("result_truncated") != nil && s.get("result_truncated").str == "true"
		if truncated {
			st.truncated = append(st.truncated, fmt.Sprintf("%s step %s (%s, %d characters)", id, i, s.get("action").str, len([]rune(s.get("result").str))))
		}
		switch {
		case found[i]:
			st.located++
		case slices.ContainsFunc(hits, func(h hit) bool { return h.stepI == i && (h.passages > 0 || len(h.problems) > 0) }):
			// not located: said above
		case truncated && !templateTrace.MatchString(s.get("result").str):
			st.cutOff = append(st.cutOff, fmt.Sprintf("%s step %s (%s)", id, i, s.get("action").str))
		default:
			st.notLocated = append(st.notLocated, fmt.Sprintf("%s step %s: no <INFORMATION> passage in its result", id, i))
		}
	}
	return st
}

// leftover finds template text still in the record outside labels after
// rewriting, and says where. The agent's own mentions of the tag ("the
// <INFORMATION> section") are its words, not the attacker's, and stay.
func leftover(rec *node) string {
	var where string
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		switch n.kind {
		case '{':
			for i, k := range n.keys {
				if path == "" && k == "labels" {
					continue
				}
				walk(n.vals[i], path+"."+k)
			}
		case '[':
			for i, v := range n.vals {
				walk(v, path+"["+strconv.Itoa(i)+"]")
			}
		case '"':
			if where != "" || !templateTrace.MatchString(n.str) {
				return
			}
			if m := templateTrace.FindString(withoutMentions(n.str)); m != "" {
				where = path + ": " + m
			}
		}
	}
	walk(rec, "")
	return where
}

// withoutMentions blanks the mentions of the opening tag in s.
func withoutMentions(s string) string {
	b := []byte(s)
	for _, o := range openTag.FindAllStringIndex(s, -1) {
		if isMention(s, o) {
			for i := o[0]; i < o[1]; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}
