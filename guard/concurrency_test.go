package guard_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// channelsOf are the prohibitions the sessions state, one per session in
// turn, with the tool each one forbids.
var channelsOf = []struct{ said, tool string }{
	{"Please don't send me any text messages.", "send_sms"},
	{"Please don't email me.", "send_email"},
	{"Please don't call me.", "call_customer"},
}

var contactTools = []string{"send_sms", "send_email", "call_customer"}

// session is one conversation of the concurrency test: its own trace, its
// own card (a prohibition and an address), its own tools.
type session struct {
	id, order, address string
	banned             string // the tool its prohibition forbids
	tools              map[string]*guardtest.Tool
	rec                *trace.Recorder
	findings           []trace.Finding
	err                error
}

func newSession(i int) *session {
	s := &session{
		id:      fmt.Sprintf("session-%02d", i),
		order:   fmt.Sprintf("A%d", 1000+i),
		address: fmt.Sprintf("%d Elm Street, Springfield", 100+i),
		banned:  channelsOf[i%len(channelsOf)].tool,
		tools:   map[string]*guardtest.Tool{},
	}
	for _, name := range append(slices.Clone(contactTools), "update_address", "refund_all") {
		s.tools[name] = guardtest.NewTool(name, "", nil)
	}
	s.tools["query_order"] = guardtest.NewTool("query_order", "Look up an order by id", func(_ context.Context, in string) (string, error) {
		return fmt.Sprintf(`{"order_id":%q,"status":"in transit"}`, s.order), nil
	}).WithParameters(map[string]any{
		"type":       "object",
		"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
		"required":   []string{"order_id"},
	})
	return s
}

// turns are what the session's user says.
func (s *session) turns(i int) []string {
	return []string{
		channelsOf[i%len(channelsOf)].said + " My address is " + s.address + ".",
		"Where is order " + s.order + "?",
		"Send me the tracking details.",
		"Please put my address on order " + s.order + " and refund it.",
	}
}

// model answers each user turn with tool calls — a loop, one call per
// contact channel, a write and a call off the allow-list — and then with text.
func (s *session) model() *guardtest.Model {
	return guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		last := msgs[len(msgs)-1]
		if last.Role == llms.ChatMessageTypeTool {
			return guardtest.Text("Here is what I found for you."), nil
		}
		said := messageText(last)
		order := fmt.Sprintf(`{"order_id":%q}`, s.order)
		switch {
		case strings.HasPrefix(said, "Where is order"):
			return guardtest.Reply{Calls: []guardtest.Call{{Name: "query_order", Args: order}, {Name: "query_order", Args: order}, {Name: "query_order", Args: order}}}, nil
		case strings.HasPrefix(said, "Send me"):
			text := fmt.Sprintf(`{"text":"Tracking for %s"}`, s.order)
			return guardtest.Reply{Calls: []guardtest.Call{{Name: "send_sms", Args: text}, {Name: "send_email", Args: text}, {Name: "call_customer", Args: text}}}, nil
		case strings.HasPrefix(said, "Please put"):
			return guardtest.Reply{Calls: []guardtest.Call{
				{Name: "update_address", Args: fmt.Sprintf(`{"order_id":%q,"address":%q}`, s.order, s.address)},
				{Name: "refund_all", Args: order},
			}}, nil
		}
		return guardtest.Text("Noted."), nil
	})
}

// TestConcurrentSessions runs 64 sessions at once through one Guard and one
// in-memory ledger, each with its own trace and memory card, and accounts
// for every step and violation at the end: each session finds exactly its
// own loop, its own prohibition and its own call off the allow-list; the
// ledger holds exactly the trace's gate steps, each under the right trace
// and session; and no session's card ever stops another session's call.
func TestConcurrentSessions(t *testing.T) {
	const sessions = 64
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	g := guard.New(guard.Config{
		Memory: &guard.MemoryOptions{},
		Gates: guard.Gates{
			AllowedTools: []string{"query_order", "send_sms", "send_email", "call_customer", "update_address"},
		},
		Observe: guard.Observation{
			Ledger: led,
		},
	})

	// A follower reads the ledger while the sessions append to it, resuming
	// from the last sequence number it saw, as a live reporter would.
	following, stopFollowing := context.WithCancel(context.Background())
	followed := make(chan []ledger.Entry, 1)
	go func() {
		var seen []ledger.Entry
		var after uint64
		for {
			last := following.Err() != nil // the sessions are done: one more pass sees everything
			for e, err := range led.Entries(context.Background(), ledger.Query{AfterSeq: after}) {
				if err != nil {
					t.Errorf("following the ledger: %v", err)
					break
				}
				seen, after = append(seen, e), e.Seq
			}
			if last {
				followed <- seen
				return
			}
			// A real pause between passes: the test measures 64 sessions
			// against a real ledger, and nothing waits on this clock.
			select {
			case <-following.Done():
			case <-time.After(time.Millisecond):
			}
		}
	}()

	ss := make([]*session, sessions)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range ss {
		s := newSession(i)
		ss[i] = s
		wg.Go(func() {
			ctx, rec := g.StartTrace(context.Background(), s.id, "after-sales")
			s.rec = rec
			model := s.model()
			tls := make([]tools.Tool, 0, len(s.tools))
			for _, name := range slices.Sorted(maps.Keys(s.tools)) {
				tls = append(tls, s.tools[name])
			}
			var msgs []llms.MessageContent
			for _, turn := range s.turns(i) {
				msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
				res, err := g.Run(ctx, model, tls, msgs)
				if err != nil {
					s.err = err
					return
				}
				if res.Status != guard.StatusDone {
					s.err = fmt.Errorf("turn %q ended %s: %s", turn, res.Status, res.Answer)
					return
				}
				s.findings = append(s.findings, res.Findings...)
				msgs = res.Messages
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopFollowing()
	t.Logf("%d sessions in %v", sessions, took)

	// Each session found its own violations, and only them.
	want := []string{"loop@block", memory.RuleProhibition + "@block", "tool-allow-list@block"}
	byTrace := map[string]*session{}
	gateSteps := 0
	for _, s := range ss {
		if s.err != nil {
			t.Errorf("%s: %v", s.id, s.err)
			continue
		}
		tr := s.rec.Trace()
		byTrace[tr.ID] = s
		if got := ruleVerdicts(s.findings); !slices.Equal(got, want) {
			t.Errorf("%s: findings = %v, want %v", s.id, got, want)
		}
		for _, f := range s.findings {
			if f.Rule == memory.RuleProhibition && !strings.Contains(f.Message, s.banned) {
				t.Errorf("%s (forbids %s): prohibition finding %q", s.id, s.banned, f.Message)
			}
			if f.Step < 0 || f.Step >= len(tr.Steps) || !strings.Contains(tr.Steps[f.Step].Args, s.order) {
				t.Errorf("%s: finding %s judged step %d, not a call about its order %s", s.id, f.Rule, f.Step, s.order)
			}
		}
		// Another session's card never stopped this one's calls.
		for _, name := range contactTools {
			ran := len(s.tools[name].Inputs())
			if wantRan := 1; name == s.banned {
				if ran != 0 {
					t.Errorf("%s: %s ran %d times despite the session's prohibition", s.id, name, ran)
				}
			} else if ran != wantRan {
				t.Errorf("%s: %s ran %d times, want %d: stopped by another session's card?", s.id, name, ran, wantRan)
			}
		}
		if got, want := s.tools["update_address"].Inputs(), []string{fmt.Sprintf(`{"order_id":%q,"address":%q}`, s.order, s.address)}; !slices.Equal(got, want) {
			t.Errorf("%s: update_address inputs = %q, want %q", s.id, got, want)
		}
		if got := len(s.tools["query_order"].Inputs()); got != 2 {
			t.Errorf("%s: query_order ran %d times, want 2 (the third is a loop)", s.id, got)
		}
		if n := len(s.tools["refund_all"].Inputs()); n != 0 {
			t.Errorf("%s: refund_all, off the allow-list, ran %d times", s.id, n)
		}
		// The trace holds this session only: its turns, its card, its steps.
		if tr.SessionID != s.id || len(tr.UserTurns) != 4 {
			t.Errorf("%s: trace of session %q with %d user turns", s.id, tr.SessionID, len(tr.UserTurns))
		}
		for _, st := range tr.Steps {
			if strings.Contains(st.Args+st.Result, "Elm Street") && !strings.Contains(st.Args+st.Result, s.address) {
				t.Errorf("%s: step %d holds another session's address: %s %s", s.id, st.Index, st.Args, st.Result)
			}
		}
		gates := findingsOf(tr)
		if got := ruleVerdicts(gates); !slices.Equal(got, want) {
			t.Errorf("%s: gate steps = %v, want %v", s.id, got, want)
		}
		gateSteps += len(gates)
	}

	// The ledger holds every gate step once, under the right trace and session.
	type key struct {
		trace, rule string
		step        int
	}
	recorded := map[key]int{}
	for _, s := range ss {
		tr := s.rec.Trace()
		for _, f := range findingsOf(tr) {
			recorded[key{tr.ID, f.Rule, f.Step}]++
		}
	}
	var entries []ledger.Entry
	for e, err := range led.Entries(context.Background(), ledger.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	if len(entries) != gateSteps {
		t.Errorf("ledger holds %d entries, the traces %d gate steps", len(entries), gateSteps)
	}
	for _, e := range entries {
		s, ok := byTrace[e.TraceID]
		if !ok {
			t.Errorf("ledger entry %d: trace %q belongs to no session", e.Seq, e.TraceID)
			continue
		}
		if e.SessionID != s.id {
			t.Errorf("ledger entry %d: trace %q of %s filed under session %q", e.Seq, e.TraceID, s.id, e.SessionID)
		}
		k := key{e.TraceID, e.Rule, e.Step}
		if recorded[k] == 0 {
			t.Errorf("ledger entry %d: %s@%d in %s is not a gate step of that trace (or is there twice)", e.Seq, e.Rule, e.Step, s.id)
		}
		recorded[k]--
	}
	for _, s := range ss[:3] {
		n := 0
		for _, err := range led.Entries(context.Background(), ledger.Query{SessionID: s.id}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(want) {
			t.Errorf("ledger query for %s: %d entries, want %d", s.id, n, len(want))
		}
	}
	// The follower, resuming after the last sequence number it saw, saw
	// every entry once, in order.
	seen := <-followed
	if got, want := seqs(seen), seqs(entries); !slices.Equal(got, want) {
		t.Errorf("follower saw %d entries, the ledger holds %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
}

func seqs(es []ledger.Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
