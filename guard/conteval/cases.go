package conteval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// TagContinuousEval tags every regression case the evaluator makes, and
// TagReview those a person has not checked yet (they have no
// last_verified date either).
const (
	TagContinuousEval = "continuous-eval"
	TagReview         = "review"
)

// Merge adds the regression cases red to the golden set golden, as the
// method asks every two weeks: each case whose id, or whose turns, the set
// does not hold yet is appended, tagged TagReview and without a
// last_verified date, so that it stays stale until a person has checked
// its baseline. It returns the merged set (golden's cases first, in
// order) and the ids of the cases it added; golden is not modified.
func Merge(golden, red []replay.Case) (merged []replay.Case, added []string) {
	merged = slices.Clone(golden)
	ids := map[string]bool{}
	turns := map[string]bool{}
	key := func(c replay.Case) string { return strings.Join(c.Turns, "\x00") }
	for _, c := range golden {
		ids[c.ID], turns[key(c)] = true, true
	}
	for _, c := range red {
		if ids[c.ID] || turns[key(c)] {
			continue
		}
		c.LastVerified = ""
		if !slices.Contains(c.Tags, TagReview) {
			c.Tags = append(slices.Clone(c.Tags), TagReview)
		}
		ids[c.ID], turns[key(c)] = true, true
		merged = append(merged, c)
		added = append(added, c.ID)
	}
	return merged, added
}

// Case is a regression case made from a red sample: a health-check case
// (replay.Case) that replays the sample's conversation beside the golden
// set, and the provenance that the case format has no keys for.
//
// The health-check case has:
//
//	id             "ce-" + the trace id (ids that do not fit the case id
//	               pattern are cut and suffixed with a hash)
//	category       "boundary" for a sample in the low-confidence band,
//	               "normal" otherwise
//	title          the failed assertions, the trace id, the route and its
//	               recent pass rates, in words
//	route, turns   the trace's route and user turns
//	answer         for a failed citations-retrieved: must_not the uncited
//	               id; for refusal-without-evidence: must one of the
//	               refusal texts
//	constraints    for a failed allow-list: the tool must not run
//	tags           "ce_" + each failed assertion's name, then
//	               "continuous-eval"
//	last_verified  the round's date: nobody has checked it yet
//
// JSON answers and amounts have no expression in the case format; their
// tags say what to check.
type Case struct {
	// Case is the health-check case.
	Case replay.Case `json:"case"`
	// TraceID, SessionID, Route and Bands describe the sample.
	TraceID   string `json:"trace_id"`
	SessionID string `json:"session_id,omitempty"`
	Route     string `json:"route,omitempty"`
	Bands     Band   `json:"bands"`
	// Time and ConfigVersion identify the round.
	Time          time.Time `json:"time"`
	ConfigVersion string    `json:"config_version"`
	// Failed are the failed assertions' findings: Rule is "ce_" + the
	// assertion's name.
	Failed []trace.Finding `json:"failed"`
	// RouteHistory is the route's pass counts over recent rounds, oldest
	// first, this round last.
	RouteHistory []HistoryPoint `json:"route_history"`
}

var caseID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,61}$`)

// CaseID returns the health-check case id of a trace: "ce-" + traceID,
// or, when traceID does not fit replay's id pattern, "ce-", its first 40
// usable characters, "-" and 8 hex digits of its SHA-256.
func CaseID(traceID string) string {
	if caseID.MatchString(traceID) {
		return "ce-" + traceID
	}
	clean := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, traceID)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	sum := sha256.Sum256([]byte(traceID))
	if clean != "" {
		clean += "-"
	}
	return "ce-" + clean + hex.EncodeToString(sum[:4])
}

// newCase makes the regression case of a red sample.
func newCase(s *SampleResult, rep *Report, refusals []string, history []HistoryPoint) (Case, bool) {
	c := Case{
		TraceID: s.TraceID, SessionID: s.SessionID, Route: s.Route, Bands: s.Bands,
		Time: rep.Time, ConfigVersion: rep.ConfigVersion, RouteHistory: history,
	}
	var names []string
	for _, f := range s.Failed() {
		c.Failed = append(c.Failed, f.Outcome.Finding)
		names = append(names, f.Name)
	}
	// No last_verified: nobody has checked the baseline yet, so the case
	// is stale, and tagged for review, until a person has.
	rc := replay.Case{ID: CaseID(s.TraceID), Category: replay.Normal, Route: s.Route}
	if s.Bands.Has(BandLowConfidence) {
		rc.Category = replay.Boundary
	}
	for _, u := range s.Trace.UserTurns {
		if strings.TrimSpace(u) != "" {
			rc.Turns = append(rc.Turns, u)
		}
	}
	for _, r := range s.Failed() {
		f := r.Outcome.Finding
		rc.Tags = append(rc.Tags, RulePrefix+r.Name)
		switch r.Name {
		case NameCitationsRetrieved:
			if ev := strings.TrimSpace(f.Evidence); ev != "" && !strings.Contains(ev, "|") && !slices.Contains(rc.Answer.MustNot, ev) {
				rc.Answer.MustNot = append(rc.Answer.MustNot, ev)
			}
		case NameRefusalWithoutEvidence:
			var alts []string
			for _, t := range refusals {
				if t = strings.TrimSpace(t); t != "" && !strings.Contains(t, "|") {
					alts = append(alts, t)
				}
			}
			if len(alts) > 0 {
				rc.Answer.Must = append(rc.Answer.Must, strings.Join(alts, "|"))
			}
		case NameAllowedTools:
			if tool := strings.TrimSpace(f.Evidence); tool != "" && len(rc.Turns) > 0 {
				rc.Constraints = append(rc.Constraints, replay.Constraint{
					ID: "ce-no-" + tool, Turn: 0, NoTool: tool,
					Text: fmt.Sprintf("%q is not on the allow-list", tool),
				})
			}
		}
	}
	rc.Tags = append(rc.Tags, TagContinuousEval, TagReview)
	rc.Title = caseTitle(s, names, history)
	c.Case = rc
	return c, rc.Validate() == nil
}

// caseTitle says in words what failed where, and how the route has fared.
func caseTitle(s *SampleResult, names []string, history []HistoryPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed on production trace %s", strings.Join(names, ", "), s.TraceID)
	if s.Route != "" {
		fmt.Fprintf(&b, " (route %s)", s.Route)
	}
	var rates []string
	for _, h := range history {
		if r, ok := h.All.Rate(); ok {
			rates = append(rates, fmt.Sprintf("%.2f", r))
		}
	}
	if len(rates) > 0 {
		fmt.Fprintf(&b, "; route pass rate over all samples, last %d rounds: %s", len(rates), strings.Join(rates, " "))
	}
	return b.String()
}

// WriteCases writes the health-check cases of cases to w, one line each,
// in the golden-set format that replay.LoadCases reads.
func WriteCases(w io.Writer, cases []Case) error {
	for i := range cases {
		if err := replay.WriteCase(w, cases[i].Case); err != nil {
			return &Error{Op: "cases", Err: fmt.Errorf("%w: %v", ErrCase, err)}
		}
	}
	return nil
}

// WriteCaseDetails writes cases to w as JSON Lines, one Case object per
// line, provenance included; ReadCaseDetails reads them back.
func WriteCaseDetails(w io.Writer, cases []Case) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range cases {
		buf.Reset()
		if err := enc.Encode(&cases[i]); err != nil {
			return &Error{Op: "cases", Err: fmt.Errorf("%w: %v", ErrCase, err)}
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return &Error{Op: "cases", Err: err}
		}
	}
	return nil
}

// ReadCaseDetails reads what WriteCaseDetails wrote. Each case's
// health-check case is validated; a bad line is an *Error wrapping ErrCase
// that names it.
func ReadCaseDetails(r io.Reader) ([]Case, error) {
	var out []Case
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), replay.MaxLine*4)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return out, &Error{Op: "cases", Line: line, Err: fmt.Errorf("%w: %v", ErrCase, err)}
		}
		if err := c.Case.Validate(); err != nil {
			return out, &Error{Op: "cases", Line: line, Err: fmt.Errorf("%w: %v", ErrCase, err)}
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return out, &Error{Op: "cases", Line: line + 1, Err: err}
	}
	return out, nil
}

// refusalTexts returns the refusal texts the assertions accept.
func refusalTexts(c AssertionConfig) []string {
	if len(c.RefusalTexts) > 0 {
		return c.RefusalTexts
	}
	return defaultRefusals()
}

// defaultRefusals are the guard's refusals and handoff messages in every
// language of the default lexicon, English first.
func defaultRefusals() []string {
	replies := lexicon.Default().Replies
	en := replies[lexicon.EN]
	out := []string{en.Refusal, en.Handoff}
	for _, lang := range slices.Sorted(maps.Keys(replies)) {
		for _, s := range []string{replies[lang].Refusal, replies[lang].Handoff} {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
