package guard

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/trace"
)

var (
	identKey   = regexp.MustCompile(`(?i)^(to|cc|bcc|recipients?|receiver|payee|beneficiary|target|destination|e_?mail|email_?address|phone|phone_?number|mobile|tel|iban|account|account_?(id|number|no)|user_?(id|name)|customer|customer_?id|contact|contact_?id|order_?id|reservation_?id|booking_?id|payment_?(method_?)?id|address|shipping_?address|delivery_?address|url|link|card|card_?number|password|new_?password|passcode|pin|secret|token|api_?key|收件人|手机号|电话|地址|账号|账户|订单号|密码)$|_id$`)
	contentKey = regexp.MustCompile(`(?i)^(content|body|message|text|subject|note|notes|description|summary|details|内容|正文|消息)$`)

	emailValue = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$`)
	ibanValue  = regexp.MustCompile(`^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$`)
	phoneValue = regexp.MustCompile(`^\+?\d[\d\s().-]{6,}\d$`)
	urlValue   = regexp.MustCompile(`^(https?://|www\.)\S+$`)

	// instructionMarkers find text that addresses the agent with orders: what
	// a prompt injection hidden in a tool result looks like. They are
	// generic phrasings, not any one attack's strings.
	instructionMarkers = regexp.MustCompile(`(?i)\bignore (all |any )?(the |your )?(previous|prior|above|earlier|original) (instructions|prompts?|tasks?)\b` +
		`|\b(new|updated|additional|important) instructions?\b` +
		`|<\s*/?\s*(information|instructions?|system|important|admin)\s*>` +
		`|\bbefore you (can )?(solve|do|complete|continue|answer|finish|proceed)\b` +
		`|\b(you|assistant|ai|agent|model),? (must|should|need to|have to) (now |first |also |immediately )?(send|transfer|forward|e-?mail|delete|pay|change|update|visit|click|call|invite|share|post|book|create|reply)\b` +
		`|\bplease (do|perform|execute|complete) the following\b` +
		`|\bthis is an? (important |urgent )?message from\b` +
		`|忽略(之前|以上|前面|先前)的(指令|指示|要求)|(请|你必须)(立即|马上|先)(转账|发送|转发|删除|支付)`)
)

// CarriesInstructions reports whether text addresses the agent with orders —
// "ignore previous instructions", "before you can solve the task", "you must
// now send" — the mark of a prompt injection hidden in content the agent
// read.
func CarriesInstructions(text string) bool { return instructionMarkers.MatchString(text) }

// instructionsKey memoises CarriesInstructions per recorded step in its
// trace: provenance asks about every earlier result at every write.
type instructionsKey struct{ s *trace.Step }

func stepCarriesInstructions(t *trace.Trace, p *trace.Step) bool {
	return t.Memo(instructionsKey{p}, func() any { return CarriesInstructions(p.Result) }).(bool)
}

// identifying reports whether an argument is an identifying value: its key
// names a recipient, account, contact, phone, e-mail, IBAN, id or address, or
// its value looks like an e-mail, IBAN, phone number or URL.
func identifying(path string, v string) bool {
	key := lastKey(path)
	if dateKey.MatchString(key) || isDate(v) {
		return false // dates are reformatted freely ("January 11th" → 2025-01-11)
	}
	if identKey.MatchString(key) {
		return true
	}
	return emailValue.MatchString(v) || ibanValue.MatchString(v) || phoneValue.MatchString(v) || urlValue.MatchString(v)
}

func isDate(v string) bool {
	if len(v) < 5 || len(v) > 25 {
		return false
	}
	for _, l := range dateLayouts {
		if _, err := time.Parse(l, v); err == nil {
			return true
		}
	}
	return false
}

// canonical strips what varies in how the same value is written: a URL's
// scheme and trailing slash.
func canonical(v string) string {
	if urlValue.MatchString(v) {
		v = strings.TrimPrefix(strings.TrimPrefix(v, "https://"), "http://")
		v = strings.TrimSuffix(v, "/")
	}
	return v
}

func leafString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// norm folds case and drops the separators people and models vary in ids,
// phones and IBANs.
func norm(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '#', '(', ')', '\t', '\n', '_', '.':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// mentions reports whether text mentions value: as a whole word for short
// values, as a normalised substring for longer ones.
func mentions(text, value string) bool {
	value = canonical(value)
	if len(value) <= 4 {
		for i := 0; ; {
			j := strings.Index(text[i:], value)
			if j < 0 {
				return false
			}
			start, end := i+j, i+j+len(value)
			if !wordByte(text, start-1) && !wordByte(text, end) {
				return true
			}
			i = start + 1
		}
	}
	return strings.Contains(norm(text), norm(value))
}

// wordByte reports whether text[i] is part of a word (letter or digit),
// treating any byte of a multi-byte rune as a letter.
func wordByte(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	c := text[i]
	return c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// source is one place a value can come from.
type source struct {
	step    *trace.Step // nil for user turns and the memory card
	trusted bool
	json    any // the decoded result, when it is JSON
	text    string
}

// Provenance checks the identifying values passed to state-changing tools
// (recipients, accounts, IBANs, e-mails, phones, order ids, addresses):
//
//   - each must come from somewhere: the user's turns, the memory card, or
//     the result of an earlier tool call; one that appears nowhere was made
//     up (RuleProvenance);
//   - one that appears only in untrusted content — results of tools whose
//     policy is Untrusted, or any result that carries instructions — was
//     injected (RuleInjection);
//   - content passed to the call (a message body, a subject, a note) that
//     quotes the result of an earlier call about one entity must go to that
//     same entity: sending customer 3's quotes to customer 7 is flagged
//     (RuleProvenance).
//
// Findings are judged Block.
func Provenance(tools ToolPolicies) Rule {
	return NewRule(RuleProvenance, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindTool {
			return nil
		}
		write := stateChanging(s.Name, tools[s.Name])
		if !write && !strings.Contains(s.Args, "http") && !strings.Contains(s.Args, "www.") {
			return nil // a read is checked for injected URLs only
		}
		args, ok := argsMap(s.Args)
		if !ok {
			return nil
		}
		var idents, contents []string
		var identPaths []string
		walk("", args, func(path string, leaf any) {
			v, ok := leafString(leaf)
			if !ok || strings.TrimSpace(v) == "" {
				return
			}
			switch {
			case !write:
				// A read goes wherever it is pointed: only a URL that
				// untrusted content supplied is suspect.
				if urlValue.MatchString(v) {
					idents, identPaths = append(idents, v), append(identPaths, path)
				}
			case contentKey.MatchString(lastKey(path)) || (len(v) >= 40 && !identifying(path, v)):
				contents = append(contents, v)
			case identifying(path, v):
				idents, identPaths = append(idents, v), append(identPaths, path)
			}
		})
		if len(idents) == 0 {
			return nil
		}
		sources := collectSources(t, tools)
		truncated := slices.ContainsFunc(t.Steps, func(p *trace.Step) bool { return p.Truncated })
		var out []trace.Finding
		for i, v := range idents {
			trusted, untrusted := false, false
			for _, src := range sources {
				if src.has(v) {
					if src.trusted {
						trusted = true
						break
					}
					untrusted = true
				}
			}
			switch {
			case trusted:
			case untrusted:
				out = append(out, trace.Finding{
					Rule: RuleInjection, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
					Message:  fmt.Sprintf("%s=%q reaches %q only from untrusted content", identPaths[i], v, s.Name),
					Evidence: v, Tags: []string{"injection"},
				})
			case !write || truncated:
				// A read may explore; and a value may hide in the part of
				// a result the recorder cut.
			default:
				out = append(out, trace.Finding{
					Rule: RuleProvenance, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
					Message:  fmt.Sprintf("%s=%q comes from no user turn, memory or earlier tool result", identPaths[i], v),
					Evidence: v, Tags: []string{"unsourced-value"},
				})
			}
		}
		if f, ok := entityMismatch(t, s, idents, contents); ok && write {
			out = append(out, f)
		}
		return out
	})
}

func (src source) has(v string) bool {
	if src.json != nil {
		found := false
		walk("", src.json, func(_ string, leaf any) {
			if found {
				return
			}
			if l, ok := leafString(leaf); ok && (norm(canonical(l)) == norm(canonical(v)) || (len(v) > 4 && mentions(l, v))) {
				found = true
			}
		})
		return found
	}
	return mentions(src.text, v)
}

func collectSources(t *trace.Trace, tools ToolPolicies) []source {
	var out []source
	for _, u := range t.UserTurns {
		out = append(out, source{trusted: true, text: u})
	}
	for _, p := range t.Steps {
		switch {
		case p.Kind == trace.KindMemory:
			out = append(out, source{trusted: true, text: p.Result})
		case (p.Kind == trace.KindTool || p.Kind == trace.KindRetrieval) && !p.Blocked && p.Result != "":
			src := source{step: p, text: p.Result, trusted: !tools[p.Name].Untrusted && !stepCarriesInstructions(t, p)}
			var v any
			if json.Unmarshal([]byte(p.Result), &v) == nil {
				src.json = v
			}
			out = append(out, src)
			// The call's own arguments were vetted when it was made.
			out = append(out, source{step: p, trusted: true, text: p.Args})
		}
	}
	return out
}

// entityMismatch finds content that quotes an earlier result about one
// entity while the call's identifying values point at another.
func entityMismatch(t *trace.Trace, s *trace.Step, idents, contents []string) (trace.Finding, bool) {
	if len(contents) == 0 {
		return trace.Finding{}, false
	}
	content := strings.Join(contents, "\n")
	var about []string // the entities the content is about
	var from *trace.Step
	for _, p := range t.Steps {
		if p.Kind != trace.KindTool || p.Blocked || p.Result == "" {
			continue
		}
		ids := stepIdents(p)
		if len(ids) == 0 || !quotes(content, p.Result) {
			continue
		}
		about, from = append(about, ids...), p
	}
	if len(about) == 0 {
		return trace.Finding{}, false
	}
	var to []string // the entities the call is addressed to
	for _, v := range idents {
		to = append(to, v)
		to = append(to, recordIDs(t, v)...)
	}
	for _, a := range about {
		if slices.ContainsFunc(to, func(x string) bool { return norm(x) == norm(a) }) {
			return trace.Finding{}, false
		}
	}
	return trace.Finding{
		Rule: RuleProvenance, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
		Message: fmt.Sprintf("%q sends content from %s(%s) to %s, a different entity",
			s.Name, from.Name, strings.Join(about, ", "), strings.Join(idents, ", ")),
		Evidence: s.Args, Tags: []string{"entity-mismatch"},
	}, true
}

// stepIdents returns the identifying argument values of a step.
func stepIdents(p *trace.Step) []string {
	args, ok := argsMap(p.Args)
	if !ok {
		return nil
	}
	var out []string
	walk("", args, func(path string, leaf any) {
		if v, ok := leafString(leaf); ok && v != "" && identifying(path, v) {
			out = append(out, v)
		}
	})
	return out
}

// quotes reports whether content repeats a distinctive value of a result:
// a string of 4+ characters or a number of 3+ digits.
func quotes(content, result string) bool {
	var v any
	if json.Unmarshal([]byte(result), &v) != nil {
		return false
	}
	found := false
	walk("", v, func(path string, leaf any) {
		if found {
			return
		}
		l, ok := leafString(leaf)
		if !ok {
			return
		}
		if _, isNum := leaf.(float64); isNum && len(l) < 3 {
			return
		}
		if len(l) >= 4 && !identKey.MatchString(lastKey(path)) && mentions(content, l) {
			found = true
		}
	})
	return found
}

// recordIDs returns the ids of the records (JSON objects in earlier tool
// results) that hold value v: their "id" and "*_id" fields, or the
// identifying arguments of the call that returned them.
func recordIDs(t *trace.Trace, v string) []string {
	var out []string
	for _, p := range t.Steps {
		if p.Kind != trace.KindTool || p.Blocked || p.Result == "" {
			continue
		}
		var root any
		if json.Unmarshal([]byte(p.Result), &root) != nil {
			continue
		}
		var visit func(x any)
		visit = func(x any) {
			switch o := x.(type) {
			case []any:
				for _, e := range o {
					visit(e)
				}
			case map[string]any:
				holds := false
				var ids []string
				for k, e := range o {
					l, ok := leafString(e)
					if !ok {
						visit(e)
						continue
					}
					if norm(l) == norm(v) {
						holds = true
					}
					if lk := strings.ToLower(k); lk == "id" || strings.HasSuffix(lk, "_id") {
						ids = append(ids, l)
					}
				}
				if holds {
					if len(ids) == 0 {
						ids = stepIdents(p)
					}
					out = append(out, ids...)
				}
			}
		}
		visit(root)
	}
	return out
}
