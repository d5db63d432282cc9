package trace

import "encoding/json"

// The importers of other tools' traces join detection through these
// adapters: each Sniff predicate reads bytes, and a first line arrives at
// Detect decoded, so it is put back together (raw values stay as written).

// sniffed turns a Sniff predicate into a Format's Detect: only a mark of
// the format makes it sure; without one, the line is not in it.
func sniffed(sniff func(head []byte) bool, unless ...func(head []byte) bool) func(map[string]json.RawMessage) Match {
	return func(first map[string]json.RawMessage) Match {
		head, err := json.Marshal(first)
		if err != nil || !sniff(head) {
			return NoMatch
		}
		for _, other := range unless {
			if other(head) {
				return NoMatch // the other format's mark wins: it embeds this one
			}
		}
		return SureMatch
	}
}

func init() {
	for _, f := range []Format{
		{Name: "otlp", Doc: `OpenTelemetry GenAI spans and log events as OTLP JSON, as a collector writes them ({"resourceSpans":[...]}, {"resourceLogs":[...]})`, Detect: sniffed(SniffOTLP), Read: ImportOTLP},
		{Name: "langsmith", Doc: `LangSmith run exports, one run per line ({"run_type":...,"trace_id":...})`, Detect: sniffed(SniffLangSmith), Read: ImportLangSmith},
		{Name: "langfuse", Doc: `Langfuse trace exports, one trace per line ({"observations":[...]})`, Detect: sniffed(SniffLangfuse), Read: ImportLangfuse},
		// Anthropic content blocks appear inside LangSmith and Langfuse
		// exports of Claude calls: those formats' marks win.
		{Name: "anthropic", Doc: `Anthropic Messages logs, one exchange per line ({"messages":[...tool_use...]})`, Detect: sniffed(SniffAnthropic, SniffLangSmith, SniffLangfuse), Read: ImportAnthropic},
	} {
		RegisterFormat(f)
	}
}
