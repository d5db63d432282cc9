package health

import (
	"bytes"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// Names of the files WriteFiles writes.
const (
	FileJSON     = "report.json"
	FileMarkdown = "report.md"
	FileHTML     = "report.html"
)

// WriteFiles writes the report into dir, creating it if needed:
// report.json (everything, machine-readable), report.md, and report.html,
// self-contained: a radar chart in inline SVG, the metrics, the problem
// cases linked to their traces' timelines, the root causes by tag and the
// guard's violations by rule.
func (r *Report) WriteFiles(dir string) error {
	return writeFiles(dir, r, &page{Reports: []*Report{r}}, r.redact)
}

// WriteFiles writes the comparison into dir as WriteFiles does a report,
// with both runs overlaid on the radar chart, the scores side by side with
// their deltas, and the side-effect verdict.
func (c *Comparison) WriteFiles(dir string) error {
	red := c.After.redact
	if red == nil {
		red = c.Before.redact
	}
	return writeFiles(dir, c, &page{Reports: []*Report{c.Before, c.After}, Cmp: c}, red)
}

// writeFiles writes v's files into dir, their text through redact when it
// is not nil.
func writeFiles(dir string, v any, p *page, redact func(string) string) error {
	fail := func(err error) error { return &Error{Op: "write", Err: err} }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(err)
	}
	if redact != nil {
		var err error
		if p, err = redactedPage(&js, p, redact); err != nil {
			return fail(err)
		}
	}
	p.prepare()
	var md, html bytes.Buffer
	if err := mdTemplate.Execute(&md, p); err != nil {
		return fail(err)
	}
	if err := htmlTemplate.Execute(&html, p); err != nil {
		return fail(err)
	}
	for name, b := range map[string][]byte{FileJSON: js.Bytes(), FileMarkdown: md.Bytes(), FileHTML: html.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fail(err)
		}
	}
	return nil
}

// page is what the templates render: one report, or two with their comparison.
type page struct {
	Reports   []*Report
	Cmp       *Comparison
	Title     string
	Generated string
	Baseline  Baseline
	Shape     []string
	Runs      string // "30 cases × 3 runs = 90 runs"
	Radar     htmltemplate.HTML
	Timelines []timeline
	// Verdict is the last report's: its label, release verdict and the
	// root causes to fix first (up to three that failed). Warnings say
	// what makes a comparison less than like for like.
	Verdict  *Report
	Release  Release
	FixFirst []RootCause
	Warnings []string
}

// timeline is the trace of a failed run, for the HTML report.
type timeline struct {
	Anchor, ID, Case string
	Steps            []stepLine
}

type stepLine struct {
	Index, Turn          int
	Kind, Name, Text     string
	Blocked, Bad, Shadow bool
}

var colors = []string{"#c0392b", "#2471a3", "#1e8449", "#7d3c98"}

func (p *page) prepare() {
	labels := make([]string, len(p.Reports))
	for i, r := range p.Reports {
		labels[i] = r.Label
	}
	p.Title = "Agent health check: " + strings.Join(labels, " vs ")
	last := p.Reports[len(p.Reports)-1]
	p.Generated = last.Generated.UTC().Format(time.RFC3339)
	p.Baseline = last.Baseline
	p.Shape = last.Shape
	p.Verdict, p.Release = last, last.Release
	for _, rc := range last.RootCauses {
		if rc.Failed > 0 && len(p.FixFirst) < 3 {
			p.FixFirst = append(p.FixFirst, rc)
		}
	}
	if p.Cmp != nil {
		p.Warnings = p.Cmp.Warnings()
	}
	m := last.Metrics
	if m.Cases > 0 {
		p.Runs = fmt.Sprintf("%d cases, %d runs", m.Cases, m.Runs)
	}
	p.Radar = radar(p.Reports)
	seen := map[string]bool{}
	for _, r := range p.Reports {
		ids := make([]string, 0, len(r.traces))
		for id := range r.traces {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				p.Timelines = append(p.Timelines, newTimeline(r.traces[id]))
			}
		}
	}
}

var unsafeAnchor = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// anchor is the HTML id of a trace's timeline.
func anchor(traceID string) string { return "trace-" + unsafeAnchor.ReplaceAllString(traceID, "-") }

func newTimeline(t *trace.Trace) timeline {
	tl := timeline{Anchor: anchor(t.ID), ID: t.ID, Case: t.Meta[replay.MetaCase]}
	for _, s := range t.Steps {
		l := stepLine{Index: s.Index, Turn: s.Turn, Kind: string(s.Kind), Name: s.Name, Blocked: s.Blocked}
		switch s.Kind {
		case trace.KindModel:
			switch {
			case s.Intent != "":
				l.Text = fmt.Sprintf("intent %s (%.2f)", s.Intent, s.Confidence)
			case len(s.Calls) > 0:
				var names []string
				for _, c := range s.Calls {
					names = append(names, c.Name+" "+c.Args)
				}
				l.Text = "calls " + strings.Join(names, "; ")
			default:
				l.Text = s.Result
			}
		case trace.KindTool, trace.KindRetrieval:
			l.Text = s.Args + " → " + s.Result
		case trace.KindGate:
			if f := s.Finding; f != nil {
				l.Text = fmt.Sprintf("%s on step %d: %s", f.Verdict, f.Step, f.Message)
				l.Bad, l.Shadow = f.Verdict != trace.Allow, f.Shadow
			}
		default:
			l.Text = s.Result
		}
		if s.Error != "" {
			l.Text += " error: " + firstLine(s.Error)
			l.Bad = true
		}
		l.Text = clip(l.Text, 300)
		tl.Steps = append(tl.Steps, l)
	}
	// The user's turns, before the first step of each.
	for i := len(t.UserTurns) - 1; i >= 0; i-- {
		at := slices.IndexFunc(tl.Steps, func(l stepLine) bool { return l.Turn >= i })
		if at < 0 {
			at = len(tl.Steps)
		}
		tl.Steps = slices.Insert(tl.Steps, at, stepLine{Index: -1, Turn: i, Kind: "user", Text: clip(t.UserTurns[i], 300)})
	}
	return tl
}

// radar draws the five dimension scores of each report as polygons on one
// SVG chart.
func radar(reports []*Report) htmltemplate.HTML {
	const cx, cy, rmax = 220.0, 175.0, 120.0
	pt := func(k int, score float64) (float64, float64) {
		a := -math.Pi/2 + 2*math.Pi*float64(k)/float64(len(Dimensions))
		r := rmax * score / 5
		return cx + r*math.Cos(a), cy + r*math.Sin(a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="radar" viewBox="0 0 440 %d" width="440" height="%d" style="max-width:100%%;height:auto" role="img" aria-label="scores by dimension, rings 1 to 5" xmlns="http://www.w3.org/2000/svg">`, 360+20*len(reports), 360+20*len(reports))
	for ring := 1; ring <= 5; ring++ {
		var pts []string
		for k := range Dimensions {
			x, y := pt(k, float64(ring))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		fmt.Fprintf(&b, `<polygon points="%s" fill="none" stroke="#ccc" stroke-width="1"/>`, strings.Join(pts, " "))
	}
	// The rings' scores, beside the first axis, on top of the grid.
	ringLabels := func() {
		for ring := 1; ring <= 5; ring++ {
			_, y := pt(0, float64(ring))
			fmt.Fprintf(&b, `<text class="ring" x="%.1f" y="%.1f" font-size="10" fill="#777">%d</text>`, cx+4, y+11, ring)
		}
	}
	for k, d := range Dimensions {
		x, y := pt(k, 5)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc"/>`, cx, cy, x, y)
		lx, ly := pt(k, 5.9)
		anchor := "middle"
		switch {
		case lx < cx-10:
			anchor = "end"
		case lx > cx+10:
			anchor = "start"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="13">%s</text>`, lx, ly+4, anchor, d)
	}
	for i, r := range reports {
		var pts []string
		for k, d := range Dimensions {
			x, y := pt(k, r.Score(d).Score)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		c := colors[i%len(colors)]
		fmt.Fprintf(&b, `<polygon points="%s" fill="%s" fill-opacity="0.15" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), c, c)
		y := 340 + 20*i
		fmt.Fprintf(&b, `<rect x="20" y="%d" width="14" height="14" fill="%s"/><text x="40" y="%d" font-size="13">%s: %.2f of 5, %.0f of 100</text>`,
			y, c, y+12, htmltemplate.HTMLEscapeString(r.Label), r.Total, r.Points)
	}
	ringLabels()
	b.WriteString(`</svg>`)
	return htmltemplate.HTML(b.String())
}

var funcs = map[string]any{
	"pct":    func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"f2":     func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"f1":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f0":     func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"signed": func(v float64) string { return fmt.Sprintf("%+.1f", v) },
	"ms":     func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) },
	"join":   strings.Join,
	"anchor": anchor,
	"color":  func(i int) string { return colors[i%len(colors)] },
	"weight": func(w Weights, d trace.Dimension) string { return fmt.Sprintf("%g", w.Of(d)) },
	"score":  func(r *Report, d trace.Dimension) DimensionScore { return r.Score(d) },
	"causes": func(cs []CauseCount) string {
		var parts []string
		for i, c := range cs {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("… %d more", len(cs)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s ×%d", c.Cause, c.Count))
		}
		return strings.Join(parts, "; ")
	},
	"cost": func(v float64) string { return fmt.Sprintf("%.4f", v) },
	"ratings": func(vs []RaterVerdict) string {
		var parts []string
		for _, v := range vs {
			if v.Error != "" {
				parts = append(parts, v.Rater+" none")
			} else {
				parts = append(parts, fmt.Sprintf("%s %d", v.Rater, v.Score))
			}
		}
		return strings.Join(parts, ", ")
	},
	"judgeNote": func() string { return judgeNote },
	"inc":       func(i int) int { return i + 1 },
	"mdcell":    func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") },
	"dims":      func() []trace.Dimension { return Dimensions },
	"delta": func(c *Comparison, d trace.Dimension) Delta {
		for _, x := range c.Deltas {
			if x.Dimension == d {
				return x
			}
		}
		return Delta{Dimension: d}
	},
}

// judgeNote says how the judge's verdicts enter a report.
const judgeNote = "One judge alone is a second opinion: its view scores accuracy, coherence and memory as the scores above are scored, " +
	"with each screened run, in the dimensions it was screened in, given its case's verdict instead of the rubric's score; it changes no score. " +
	"With two raters or more, their mean is the score of the screened runs of each case they agree on (a gap above one point sends the case to review instead)."

var mdTemplate = texttemplate.Must(texttemplate.New("md").Funcs(funcs).Parse(`# {{.Title}}

Generated {{.Generated}}{{with .Runs}} · {{.}}{{end}}.

**{{.Verdict.Label}}: {{if .Release.Releasable}}releasable{{else}}not releasable{{end}}** — {{.Release.Why}}.
{{- with .Release.Blockers}} What blocked release:
{{range .}}
- {{.}}
{{- end}}
{{- end}}
{{with .FixFirst}}
What to fix first:
{{range $i, $rc := .}}
{{inc $i}}. **{{.Tag}}** ({{.Failed}} failed, cases {{join .Cases " "}}): {{.Fix.Kind}}, {{mdcell .Fix.Where}} — {{mdcell .Fix.What}}
{{- range .Unguarded}}
   - Why no guard rail caught it: {{mdcell .}}
{{- end}}
{{- end}}
{{end}}{{range .Warnings}}
> **Not like for like:** {{.}}.
{{end}}{{with .Baseline}}
{{if .Oldest}}Baselines last verified {{.Oldest}}{{if ne .Oldest .Newest}} to {{.Newest}}{{end}} ({{.AgeDays}} days ago; valid for {{.ValidFor}} days).{{end}}{{if .Unverified}} {{.Unverified}} baselines were never verified (no last_verified): verify them before trusting the scores.{{end}}
{{- if .Stale}}

> **Warning:** the oldest baseline is {{.AgeDays}} days old, past its validity of {{.ValidFor}} days. Re-verify the golden set before trusting the scores.
{{- end}}
{{- with .StaleCases}}

Stale baselines ({{len .}}): {{join . ", "}}.
{{- end}}
{{- if .Tracked}}

Two-track baselines: {{.Tracked}} cases; {{len .Alignment}} with elements the expert and the agent tracks disagree on (flagged for alignment, not checked):
{{range .Alignment}}
- {{.Case}}: {{mdcell (join .Disagreements "; ")}}
{{- end}}
{{- end}}
{{end}}{{with .Shape}}
> **The golden set departs from the method's shape:** {{join . "; "}}.
{{end}}
## Scores

| dimension | weight |{{range .Reports}} {{.Label}} |{{end}}{{if .Cmp}} change |{{end}}
|---|---:|{{range .Reports}}---:|{{end}}{{if .Cmp}}---:|{{end}}
{{- $p := .}}
{{- range dims}}{{$d := .}}
| {{$d}} | {{weight (index $p.Reports 0).Weights $d}} |{{range $p.Reports}} {{f1 (score . $d).Score}} |{{end}}{{if $p.Cmp}} {{signed (delta $p.Cmp $d).Change}} |{{end}}
{{- end}}
| **total** | 100 |{{range .Reports}} **{{f2 .Total}} of 5** ({{f0 .Points}} of 100 points, {{.Band.Label}}) |{{end}}{{if .Cmp}} {{signed .Cmp.PointsDelta}} points |{{end}}
{{with .Cmp}}
{{if .Flagged}}**Side effect flagged:** the total rose by {{signed .PointsDelta}} points while {{range $i, $d := .SideEffects}}{{if $i}}, {{end}}{{$d}}{{end}} fell by 2 or more.{{else}}No side effect: no dimension{{if .Target}} outside {{range $i, $d := .Target}}{{if $i}}, {{end}}{{$d}}{{end}}{{end}} fell by 2 or more while the total rose by 8 points or more.{{end}}
{{end}}
How the scores were derived: each run is scored in each dimension on the method's anchors — 5 clean, 4 one or two minor flaws, 3 an error a guard rail caught (or more minor flaws), 2 a structural defect that got through, 1 a defect and no answer — and a dimension's score is the mean over the runs.
{{range .Reports}}{{$r := .}}
{{.Label}}:
{{range .Dimensions}}
- {{.Dimension}} {{f1 .Score}}: {{.Reason}}
{{- end}}
{{end}}
## Screening

| rate |{{range .Reports}} {{.Label}} |{{end}}
|---|{{range .Reports}}---:|{{end}}
| fabrication (runs) |{{range .Reports}} {{pct .Rates.Fabrication}} |{{end}}
| over-refusal (runs of answerable cases) |{{range .Reports}} {{pct .Rates.OverRefusal}} |{{end}}
| cascade (runs) |{{range .Reports}} {{pct .Rates.Cascade}} |{{end}}
| amnesia (runs with constraints) |{{range .Reports}} {{pct .Rates.Amnesia}} |{{end}}
| drift (cases screened) |{{range .Reports}} {{pct .Rates.Drift}} |{{end}}

## Objective metrics

| metric |{{range .Reports}} {{.Label}} |{{end}}
|---|{{range .Reports}}---:|{{end}}
| mean completion time |{{range .Reports}} {{ms .Metrics.MeanDuration}} |{{end}}
| mean tokens |{{range .Reports}} {{f1 .Metrics.MeanTokens}} |{{end}}
| mean tool calls |{{range .Reports}} {{f2 .Metrics.MeanToolCalls}} |{{end}}
| no-output rate |{{range .Reports}} {{pct .Metrics.NoOutputRate}} |{{end}}
| timeout rate (external calls) |{{range .Reports}} {{pct .Metrics.TimeoutRate}} |{{end}}
| guard retry rate (runs; not timeouts) |{{range .Reports}} {{pct .Metrics.RetryRate}} |{{end}}
| drift rate (cases) |{{range .Reports}} {{pct .Metrics.DriftRate}} |{{end}}
| findings and traces dropped before the ledger |{{range .Reports}} {{.Metrics.ReportsDropped}} |{{end}}
{{range $r := .Reports}}
## Problem cases: {{.Label}}
{{if .Problems}}
| case | category | failed runs | screens | causes | traces |
|---|---|---:|---|---|---|
{{- range .Problems}}
| {{.Case}} | {{.Category}} | {{.Failed}}/{{.Runs}} | {{join .Screens ", "}} | {{mdcell (join .Causes "; ")}} | {{join .Traces " "}} |
{{- end}}
{{else}}
None.
{{end}}
## Root causes: {{.Label}}
{{if .RootCauses}}
| tag | hits | failed | recovered | minor | cases | causes | fix direction |
|---|---:|---:|---:|---:|---|---|---|
{{- range .RootCauses}}
| {{.Tag}} | {{.Count}} | {{.Failed}} | {{.Recovered}} | {{.Minor}} | {{join .Cases " "}} | {{mdcell (causes .Causes)}} | {{.Fix.Kind}}: {{mdcell .Fix.Where}} — {{mdcell .Fix.What}} |
{{- end}}
{{else}}
None.
{{end}}
## Guard violations: {{.Label}}
{{if .Violations}}
| rule | dimension | enforced | shadow | tags | cases |
|---|---|---:|---:|---|---|
{{- range .Violations}}
| {{.Rule}} | {{.Dimension}} | {{.Enforced}} | {{.Shadow}} | {{join .Tags " "}} | {{join .Cases " "}} |
{{- end}}
{{else}}
None.
{{end}}{{with .Judge}}
## Judge: {{$r.Label}}

{{if .Name}}Judge {{.Name}}{{else}}The judge{{end}} gave a second opinion on the {{.Screened}} screened cases of {{.Cases}}: {{.Calls}} calls, {{.Errors}} errors; {{.TokensIn}} tokens in, {{.TokensOut}} out{{if .Estimated}} (estimated where the provider did not count){{end}}; cost {{cost .Cost}}. It confirmed {{.Confirmed}} (score 1 or 2) and disputed {{.Disputed}} (score 4 or 5).{{with .Raters}} Raters: {{join . ", "}}; each case's score is their mean, and a gap above 1 point between them sends the case to review:{{end}}{{if .Raters}} {{.Review}} sent to review.{{end}}

{{judgeNote}}

| dimension | computed | judge's view | verdicts |
|---|---:|---:|---:|
{{- range .Dimensions}}
| {{.Dimension}} | {{f1 .Computed}} | {{f1 .Judged}} | {{.Verdicts}} |
{{- end}}
{{if .Judged}}
| case | screens | runs | score | reason |
|---|---|---|---:|---|
{{- range .Judged}}
| {{.Case}} | {{join .Screens ", "}} | {{join .Runs " "}} | {{if .Error}}error{{else}}{{.Score}}{{end}}{{with .Ratings}} ({{ratings .}}){{end}}{{if .Review}} **review**{{end}} | {{if .Error}}{{mdcell .Error}}{{else}}{{mdcell .Reason}}{{end}} |
{{- end}}
{{else}}
No case was screened.
{{end}}{{end}}{{end}}
Traces are in execution_trace.jsonl, one line per run, by trace id.
`))

var htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans SC",sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%;margin:.6em 0}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right;white-space:nowrap}
.warn{background:#fff3cd;border:1px solid #e0c36c;padding:.6em 1em}.flag{background:#fdecea;border:1px solid #e6a19a;padding:.6em 1em}.ok{background:#eaf6ec;border:1px solid #9fd0a8;padding:.6em 1em}
.cards{display:flex;gap:1em;flex-wrap:wrap;align-items:flex-start}.card{border:1px solid #ddd;border-radius:6px;padding:.8em 1.2em;min-width:12em}
.card b{font-size:1.8em}.band{font-weight:600;text-transform:uppercase;font-size:.85em}
details{margin:.4em 0;border:1px solid #ddd;border-radius:4px;padding:.3em .6em}summary{cursor:pointer;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.tl td{font-family:ui-monospace,monospace;font-size:12px}.tl tr.user td{background:#f0f4fa}.tl tr.bad td{background:#fdecea}.tl tr.blocked td{color:#888}
.small{color:#666;font-size:.9em}
.fix{white-space:normal;min-width:16em}
@media (max-width:600px){body{margin:1em auto;padding:0 .6em}h1{font-size:1.3em}.card{min-width:0;flex:1 1 100%}td,th{padding:3px 5px}}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="small">Generated {{.Generated}}{{with .Runs}} · {{.}}{{end}}.</p>
<p class="{{if .Release.Releasable}}ok{{else}}flag{{end}}"><b>{{.Verdict.Label}}: {{if .Release.Releasable}}releasable{{else}}not releasable{{end}}</b> — {{.Release.Why}}.{{with .Release.Blockers}} What blocked release:</p><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{else}}</p>{{end}}
{{with .FixFirst}}<h2>What to fix first</h2>
<ol class="fixfirst">{{range .}}<li><b>{{.Tag}}</b> ({{.Failed}} failed, cases {{join .Cases " "}}): <b>{{.Fix.Kind}}</b>, {{.Fix.Where}}<br><span class="small">{{.Fix.What}}</span>{{range .Unguarded}}<br><span class="small">Why no guard rail caught it: {{.}}</span>{{end}}</li>{{end}}</ol>{{end}}
{{range .Warnings}}<p class="warn"><b>Not like for like:</b> {{.}}.</p>{{end}}
{{with .Baseline}}<p>{{if .Oldest}}Baselines last verified {{.Oldest}}{{if ne .Oldest .Newest}} to {{.Newest}}{{end}} ({{.AgeDays}} days ago; valid for {{.ValidFor}} days).{{end}}{{if .Unverified}} {{.Unverified}} baselines were never verified (no last_verified): verify them before trusting the scores.{{end}}</p>
{{if .Stale}}<p class="warn"><b>Warning:</b> the oldest baseline is {{.AgeDays}} days old, past its validity of {{.ValidFor}} days. Re-verify the golden set before trusting the scores.{{with .StaleCases}} Stale: {{join . ", "}}.{{end}}</p>{{end}}
{{if .Tracked}}<p>Two-track baselines: {{.Tracked}} cases; {{len .Alignment}} with elements the expert and the agent tracks disagree on (flagged for alignment, not checked).</p>
{{with .Alignment}}<ul>{{range .}}<li><b>{{.Case}}</b>: {{join .Disagreements "; "}}</li>{{end}}</ul>{{end}}{{end}}{{end}}
{{with .Shape}}<p class="warn"><b>The golden set departs from the method's shape:</b> {{join . "; "}}.</p>{{end}}
<div class="cards">
{{range $i, $r := .Reports}}<div class="card" style="border-top:4px solid {{color $i}}"><div>{{.Label}}</div><b>{{f2 .Total}}</b> of 5<div>{{f0 .Points}} of 100 points</div><div class="band">{{.Band.Label}}</div></div>
{{end}}<div>{{.Radar}}</div>
</div>
{{with .Cmp}}{{if .Flagged}}<p class="flag"><b>Side effect flagged:</b> the total rose by {{signed .PointsDelta}} points while {{range $i, $d := .SideEffects}}{{if $i}}, {{end}}{{$d}}{{end}} fell by 2 or more.</p>
{{else}}<p class="ok">No side effect: no dimension{{if .Target}} outside {{range $i, $d := .Target}}{{if $i}}, {{end}}{{$d}}{{end}}{{end}} fell by 2 or more while the total rose by 8 points or more. Total {{signed .PointsDelta}} points.</p>{{end}}{{end}}

<h2>Scores</h2>
<div class="scroll"><table>
<tr><th>dimension</th><th>weight</th>{{range .Reports}}<th>{{.Label}}</th>{{end}}{{if .Cmp}}<th>change</th>{{end}}</tr>
{{$p := .}}{{range dims}}{{$d := .}}<tr><td>{{$d}}</td><td class="n">{{weight (index $p.Reports 0).Weights $d}}</td>{{range $p.Reports}}{{$s := score . $d}}<td><b>{{f1 $s.Score}}</b> <span class="small">{{$s.Reason}}</span></td>{{end}}{{if $p.Cmp}}<td class="n">{{signed (delta $p.Cmp $d).Change}}</td>{{end}}</tr>
{{end}}<tr><th>total</th><th class="n">100</th>{{range .Reports}}<th>{{f2 .Total}} of 5 ({{f0 .Points}} of 100 points, {{.Band.Label}})</th>{{end}}{{if .Cmp}}<th class="n">{{signed .Cmp.PointsDelta}}</th>{{end}}</tr>
</table></div>
<p class="small">Each run is scored in each dimension on the method's anchors — 5 clean, 4 one or two minor flaws, 3 an error a guard rail caught (or more minor flaws), 2 a structural defect that got through, 1 a defect and no answer — and a dimension's score is the mean over the runs. The total weighs the five.</p>

<h2>Screening</h2>
<div class="scroll"><table>
<tr><th>rate</th>{{range .Reports}}<th>{{.Label}}</th>{{end}}</tr>
<tr><td>fabrication (runs citing a document or clause the knowledge base lacks)</td>{{range .Reports}}<td class="n">{{pct .Rates.Fabrication}}</td>{{end}}</tr>
<tr><td>over-refusal (runs of answerable cases that ended refused or handed off)</td>{{range .Reports}}<td class="n">{{pct .Rates.OverRefusal}}</td>{{end}}</tr>
<tr><td>cascade (runs going on after an empty or failed step)</td>{{range .Reports}}<td class="n">{{pct .Rates.Cascade}}</td>{{end}}</tr>
<tr><td>amnesia (runs with constraints that lost one)</td>{{range .Reports}}<td class="n">{{pct .Rates.Amnesia}}</td>{{end}}</tr>
<tr><td>drift (cases screened)</td>{{range .Reports}}<td class="n">{{pct .Rates.Drift}}</td>{{end}}</tr>
</table></div>

<h2>Objective metrics</h2>
<div class="scroll"><table>
<tr><th>metric</th>{{range .Reports}}<th>{{.Label}}</th>{{end}}</tr>
<tr><td>mean completion time</td>{{range .Reports}}<td class="n">{{ms .Metrics.MeanDuration}}</td>{{end}}</tr>
<tr><td>mean tokens</td>{{range .Reports}}<td class="n">{{f1 .Metrics.MeanTokens}}</td>{{end}}</tr>
<tr><td>mean tool calls</td>{{range .Reports}}<td class="n">{{f2 .Metrics.MeanToolCalls}}</td>{{end}}</tr>
<tr><td>no-output rate</td>{{range .Reports}}<td class="n">{{pct .Metrics.NoOutputRate}}</td>{{end}}</tr>
<tr><td>timeout rate (external calls that timed out)</td>{{range .Reports}}<td class="n">{{pct .Metrics.TimeoutRate}}</td>{{end}}</tr>
<tr><td>guard retry rate (runs in which the guard asked again; not timeouts)</td>{{range .Reports}}<td class="n">{{pct .Metrics.RetryRate}}</td>{{end}}</tr>
<tr><td>drift rate (cases whose key elements differ across repeats)</td>{{range .Reports}}<td class="n">{{pct .Metrics.DriftRate}}</td>{{end}}</tr>
<tr><td>findings and traces dropped before the ledger (it fell behind)</td>{{range .Reports}}<td class="n">{{.Metrics.ReportsDropped}}</td>{{end}}</tr>
</table></div>
{{range $r := .Reports}}
<h2>Problem cases: {{.Label}}</h2>
{{if .Problems}}<div class="scroll"><table>
<tr><th>case</th><th>category</th><th>failed runs</th><th>screens</th><th>causes</th><th>traces</th></tr>
{{range .Problems}}<tr><td>{{.Case}}</td><td>{{.Category}}</td><td class="n">{{.Failed}}/{{.Runs}}</td><td>{{join .Screens ", "}}</td><td>{{join .Causes "; "}}{{with .Title}}<br><span class="small">{{.}}</span>{{end}}</td><td>{{range .Traces}}<a href="#{{anchor .}}">{{.}}</a> {{end}}</td></tr>
{{end}}</table></div>{{else}}<p>None.</p>{{end}}

<h2>Root causes: {{.Label}}</h2>
{{if .RootCauses}}<div class="scroll"><table>
<tr><th>tag</th><th>fix direction</th><th>hits</th><th>failed</th><th>recovered</th><th>minor</th><th>cases</th><th>causes</th></tr>
{{range .RootCauses}}<tr><td>{{.Tag}}</td><td class="fix"><b>{{.Fix.Kind}}</b>: {{.Fix.Where}}<br><span class="small">{{.Fix.What}}</span></td><td class="n">{{.Count}}</td><td class="n">{{.Failed}}</td><td class="n">{{.Recovered}}</td><td class="n">{{.Minor}}</td><td>{{join .Cases " "}}</td><td>{{causes .Causes}}</td></tr>
{{end}}</table></div>{{else}}<p>None.</p>{{end}}

<h2>Guard violations: {{.Label}}</h2>
{{if .Violations}}<div class="scroll"><table>
<tr><th>rule</th><th>dimension</th><th>enforced</th><th>shadow</th><th>tags</th><th>cases</th></tr>
{{range .Violations}}<tr><td>{{.Rule}}</td><td>{{.Dimension}}</td><td class="n">{{.Enforced}}</td><td class="n">{{.Shadow}}</td><td>{{join .Tags " "}}</td><td>{{join .Cases " "}}</td></tr>
{{end}}</table></div>{{else}}<p>None.</p>{{end}}
{{with .Judge}}
<h2>Judge: {{$r.Label}}</h2>
<p>{{if .Name}}Judge <code>{{.Name}}</code>{{else}}The judge{{end}} gave a second opinion on the {{.Screened}} screened cases of {{.Cases}}: {{.Calls}} calls, {{.Errors}} errors; {{.TokensIn}} tokens in, {{.TokensOut}} out{{if .Estimated}} (estimated where the provider did not count){{end}}; cost {{cost .Cost}}. It confirmed {{.Confirmed}} (score 1 or 2) and disputed {{.Disputed}} (score 4 or 5).{{with .Raters}} Raters: {{join . ", "}}; each case's score is their mean, and a gap above 1 point between them sends the case to review:{{end}}{{if .Raters}} <b>{{.Review}} sent to review</b>.{{end}}</p>
<p class="small">{{judgeNote}}</p>
<div class="scroll"><table>
<tr><th>dimension</th><th>computed</th><th>judge's view</th><th>verdicts</th></tr>
{{range .Dimensions}}<tr><td>{{.Dimension}}</td><td class="n"><b>{{f1 .Computed}}</b></td><td class="n">{{f1 .Judged}} <span class="small">{{.Reason}}</span></td><td class="n">{{.Verdicts}}</td></tr>
{{end}}</table></div>
{{if .Judged}}<div class="scroll"><table>
<tr><th>case</th><th>screens</th><th>runs</th><th>score</th><th>reason</th></tr>
{{range .Judged}}<tr><td>{{.Case}}{{with .Title}}<br><span class="small">{{.}}</span>{{end}}</td><td>{{join .Screens ", "}}</td><td>{{range .Runs}}<a href="#{{anchor .}}">{{.}}</a> {{end}}</td><td class="n">{{if .Error}}error{{else}}<b>{{.Score}}</b>{{end}}{{with .Ratings}}<br><span class="small">{{ratings .}}</span>{{end}}{{if .Review}}<br><b>review</b>{{end}}</td><td>{{if .Error}}{{.Error}}{{else}}{{.Reason}}{{end}}{{with .Documents}}<br><span class="small">excerpts: {{join . " "}}</span>{{end}}</td></tr>
{{end}}</table></div>{{else}}<p>No case was screened.</p>{{end}}
{{end}}{{end}}
{{if .Timelines}}<h2>Traces of failed runs</h2>
{{range .Timelines}}<details id="{{.Anchor}}"><summary>{{.ID}}</summary>
<div class="scroll"><table class="tl"><tr><th>step</th><th>turn</th><th>kind</th><th>name</th><th></th></tr>
{{range .Steps}}<tr class="{{if eq .Kind "user"}}user{{else if .Bad}}bad{{else if .Blocked}}blocked{{end}}"><td class="n">{{if ge .Index 0}}{{.Index}}{{end}}</td><td class="n">{{.Turn}}</td><td>{{.Kind}}</td><td>{{.Name}}{{if .Shadow}} (shadow){{end}}{{if .Blocked}} (not run){{end}}</td><td>{{.Text}}</td></tr>
{{end}}</table></div></details>
{{end}}{{end}}
</body>
</html>
`))

// redactedPage passes the free-text strings of the report's JSON in js
// through redact, in place, and returns the page of the reports that JSON
// holds, their traces redacted too: the Markdown and HTML files are then
// made of the same de-identified text. Only those strings change: names,
// numbers, times, identifiers (idKeys) and the layout never do.
func redactedPage(js *bytes.Buffer, p *page, redact func(string) string) (*page, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(js.Bytes()))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.WithIndent("  "), jsontext.EscapeForHTML(false))
	var keys []string // the name each open object or array is the value of
	name := ""        // the last name read
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch kind, n := dec.StackIndex(dec.StackDepth()); {
		case tok.Kind() == '{' || tok.Kind() == '[':
			keys = append(keys, name)
		case tok.Kind() == '}' || tok.Kind() == ']':
			keys = keys[:len(keys)-1]
		case tok.Kind() == '"' && kind == '{' && n%2 == 1:
			name = tok.String()
		case tok.Kind() == '"':
			key := name
			if kind == '[' {
				key = keys[len(keys)-1]
			}
			if v := tok.String(); !idKeys[key] && !isTime(v) {
				tok = jsontext.String(redact(v))
			}
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
	js.Reset()
	js.Write(out.Bytes())
	redactTraces := func(r *Report, from *Report) {
		r.traces = make(map[string]*trace.Trace, len(from.traces))
		for id, t := range from.traces {
			r.traces[id] = ledger.RedactTrace(t, redact)
		}
	}
	if p.Cmp != nil {
		var c Comparison
		if err := json.Unmarshal(js.Bytes(), &c); err != nil {
			return nil, err
		}
		redactTraces(c.Before, p.Cmp.Before)
		redactTraces(c.After, p.Cmp.After)
		return &page{Reports: []*Report{c.Before, c.After}, Cmp: &c}, nil
	}
	var r Report
	if err := json.Unmarshal(js.Bytes(), &r); err != nil {
		return nil, err
	}
	redactTraces(&r, p.Reports[0])
	return &page{Reports: []*Report{&r}}, nil
}

// idKeys are the report's keys whose values are identifiers and names of
// the method, never free text: redactedPage leaves them alone.
var idKeys = map[string]bool{
	"label": true, "case": true, "trace_id": true, "traces": true, "tag": true, "rule": true,
	"dimension": true, "category": true, "band": true, "screen": true, "screens": true, "target": true, "side_effects": true,
}

// isTime reports whether s is a time as encoding/json writes one.
func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
