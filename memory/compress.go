package memory

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// CompressReport says what Compress did, by index into the messages it
// was given. It is the Result of a StepCompress memory step, as JSON.
//
// Its size is that of what was kept, not of the conversation: the dropped
// messages are runs of indexes (Runs), so that a report at turn 10,000 is
// no longer than one at turn 100. A report recorded before Runs, with
// "dropped" a flat array of indexes, unmarshals as well.
type CompressReport struct {
	Budget       int `json:"budget"`
	TokensBefore int `json:"tokens_before"` // the messages and the card block, estimated
	TokensAfter  int `json:"tokens_after"`
	Messages     int `json:"messages"` // messages given
	Kept         int `json:"kept"`     // messages returned
	// Elided lists the tool-result messages whose content was replaced by
	// a note of its size.
	Elided []int `json:"elided,omitempty"`
	// Dropped holds the messages left out.
	Dropped Runs `json:"dropped,omitempty"`
	// Pinned lists the user messages kept because they state an active
	// constraint.
	Pinned []int `json:"pinned,omitempty"`
	// OverBudget is set when the messages that must stay do not fit.
	OverBudget bool `json:"over_budget,omitempty"`
}

// appendJSON appends r as JSON, as encoding/json writes it, without
// reflection: the guard records one on every model call that compresses
// otherwise than the last.
func (r CompressReport) appendJSON(b []byte) []byte {
	field := func(b []byte, name string, v int) []byte {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		return strconv.AppendInt(b, int64(v), 10)
	}
	list := func(b []byte, name string, v []int) []byte {
		if len(v) == 0 {
			return b
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':', '[')
		for k, i := range v {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(i), 10)
		}
		return append(b, ']')
	}
	b = append(b, `{"budget":`...)
	b = strconv.AppendInt(b, int64(r.Budget), 10)
	b = field(b, "tokens_before", r.TokensBefore)
	b = field(b, "tokens_after", r.TokensAfter)
	b = field(b, "messages", r.Messages)
	b = field(b, "kept", r.Kept)
	b = list(b, "elided", r.Elided)
	if len(r.Dropped) > 0 {
		b = append(b, `,"dropped":`...)
		b = r.Dropped.appendJSON(b)
	}
	b = list(b, "pinned", r.Pinned)
	if r.OverBudget {
		b = append(b, `,"over_budget":true`...)
	}
	return append(b, '}')
}

// Runs is a set of indexes held as its runs of consecutive indexes, in
// increasing order: each run {from, to} holds from up to, not including,
// to, as a slice expression does. In JSON it is an array of such pairs,
// [[0,812],[815,990]]; it unmarshals from that or from a flat array of
// indexes in increasing order, [0,1,2,5], as traces recorded before Runs
// hold them. The zero value is the empty set.
type Runs [][2]int

// Len returns the number of indexes in r.
func (r Runs) Len() int {
	n := 0
	for _, run := range r {
		n += run[1] - run[0]
	}
	return n
}

// Contains reports whether i is in r.
func (r Runs) Contains(i int) bool {
	k, _ := slices.BinarySearchFunc(r, i, func(run [2]int, i int) int { return cmp.Compare(run[1]-1, i) })
	return k < len(r) && r[k][0] <= i
}

// All returns the indexes in r, in increasing order.
func (r Runs) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, run := range r {
			for i := run[0]; i < run[1]; i++ {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// add returns r with i, which is above every index in r, added.
func (r Runs) add(i int) Runs {
	if n := len(r); n > 0 && r[n-1][1] == i {
		r[n-1][1]++
		return r
	}
	return append(r, [2]int{i, i + 1})
}

// MarshalJSON writes r as [[from,to],...], or null for none.
func (r Runs) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	return r.appendJSON(make([]byte, 0, 2+12*len(r))), nil
}

func (r Runs) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for k, run := range r {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(run[0]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(run[1]), 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

// UnmarshalJSON reads runs, [[from,to],...], or a flat array of indexes.
// Runs must be in increasing order, not overlapping, each with from < to;
// indexes must be at least 0 and increase.
func (r *Runs) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &Error{Op: "decode", Err: fmt.Errorf("runs: %w", err)}
	}
	var out Runs
	if len(raw) > 0 && bytes.HasPrefix(bytes.TrimLeft(raw[0], " \t\r\n"), []byte("[")) {
		var pairs [][]int
		if err := json.Unmarshal(b, &pairs); err != nil {
			return &Error{Op: "decode", Err: fmt.Errorf("runs: %w", err)}
		}
		for k, p := range pairs {
			switch {
			case len(p) != 2:
				return &Error{Op: "decode", Err: fmt.Errorf("runs: run %d has %d numbers, want 2 (from, to)", k, len(p))}
			case p[0] < 0 || p[0] >= p[1]:
				return &Error{Op: "decode", Err: fmt.Errorf("runs: run %d is [%d,%d], want 0 <= from < to", k, p[0], p[1])}
			case len(out) > 0 && p[0] < out[len(out)-1][1]:
				return &Error{Op: "decode", Err: fmt.Errorf("runs: run %d [%d,%d] starts before the end of the one before it, %d", k, p[0], p[1], out[len(out)-1][1])}
			case len(out) > 0 && p[0] == out[len(out)-1][1]: // adjacent: one run
				out[len(out)-1][1] = p[1]
			default:
				out = append(out, [2]int{p[0], p[1]})
			}
		}
	} else {
		var flat []int
		if err := json.Unmarshal(b, &flat); err != nil {
			return &Error{Op: "decode", Err: fmt.Errorf("runs: %w", err)}
		}
		for k, i := range flat {
			if i < 0 || len(out) > 0 && i < out[len(out)-1][1] {
				return &Error{Op: "decode", Err: fmt.Errorf("runs: index %d is %d, want at least 0 and above the one before it", k, i)}
			}
			out = out.add(i)
		}
	}
	*r = out
	return nil
}

// ElideMin is the size, in estimated tokens, above which Compress may
// replace a tool result by a note of its size.
const ElideMin = 48

// Compress fits messages into budget tokens, counted with
// trace.EstimateTokens (never llms.CountTokens, which goes to the network)
// and including the block that Inject will add for c. Working from the
// oldest message, it
//
//  1. replaces the content of bulky tool results (over ElideMin tokens)
//     with "[agentguard: tool result of N tokens elided]", keeping the
//     ToolCallResponse part so that each call keeps its result;
//  2. drops the oldest messages that need not stay: whole tool exchanges
//     (an assistant message with tool calls together with the tool
//     messages that answer it, never one without the other) and the
//     assistant's small talk (text messages without tool calls), then
//  3. the oldest user messages that state nothing on the card,
//
// stopping as soon as the messages fit. It never touches the system
// messages, the last user message and everything after it (the turn in
// progress; all of the messages when none is from the user), nor a user
// message that states an active constraint c's Text shows (of ids, the
// MaxTextIDs latest): the user message whose index among the user messages, counting from 0 and
// skipping the guard's own "[agentguard] " feedback, is the constraint's
// Turn. It never separates a tool call from its result. When what must
// stay does not fit, the report says OverBudget. Once it has dropped
// anything, it also drops what is left before the first kept user message
// (answers to questions that are gone), so that the conversation still
// opens with the user, as some providers require.
//
// A budget of zero or less means no limit. messages is never modified;
// the result shares the unchanged messages with it. Inject the card after
// compressing: the constraints then survive even where their messages are
// dropped. To compress one conversation call after call, use a Compressor.
func Compress(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
	var z Compressor
	return z.Compress(messages, budget, c)
}

// A Compressor compresses one conversation call after call, as Compress
// does, keeping what it estimated and classified of the messages it has
// read, so that a call reads only the messages added since the last.
// Over budget it does not walk the history either: running sums of what
// each step of Compress would save tell where that step stops, so that a
// call costs about what it keeps (at most budget/4 messages when they
// fit), whatever the conversation's length. Conversations grow by
// appending; a Compressor checks that the caller's messages are the ones
// it read (each the same parts, by address: no allocation, about a
// nanosecond a message; the last one's parts also by value) and, when the
// caller replaced or changed one or sent fewer, reads all of them again.
// Its results are those of Compress. A call that finds nothing changed —
// no new message, the same budget, the same card — returns the same
// messages and report as the last: the Compressor never modifies what it
// returned, and its callers should not either.
//
// The zero value is ready to use. A Compressor is not safe for concurrent
// use.
type Compressor struct {
	read       int                 // messages read
	seen       marks               // the messages read
	last       llms.MessageContent // the last one read, Parts copied
	cost       []int               // messageTokens of each
	total      int                 // sum of cost
	flags      []uint8             // isUser, hasCall, isResult
	kind       []uint8             // what Compress may do with each: kindOther...
	group      []int               // the message heading the tool exchange of each; itself if none
	users      []int               // index of each user turn
	humans     []int               // index of each kindUserTalk message
	others     []int               // index of each kindOther message
	members    map[int][]int       // the tool messages of each exchange, by the message that heads it
	owner      map[string]int      // tool call id → the message that made it
	lastCaller int
	system     bool // a system message was read

	// What eliding and dropping save, so that a pass of Compress is a
	// search, not a walk.
	bulky  map[int][]bulkyPart        // the bulky tool results of each message
	notes  map[int][]llms.ContentPart // the parts of elided messages, made once
	saving []int                      // what eliding each message saves
	elide  []int                      // elide[x]: what eliding the messages before x saves
	talk   []int                      // talk[x]: the cost of the kindUserTalk messages before x
	unit   []int                      // what dropping the unit each message heads saves, once elided: 0 for none
	units  fenwick                    // the running sums of unit, updated as an exchange's results arrive

	card       string // the card text last reserved for
	cardTokens int    // what its block costs

	// The last compression, returned again while nothing it depends on
	// has changed: the messages, the budget, the card's active constraints.
	lastCall lastCall
	lastOut  []llms.MessageContent
	lastRep  CompressReport

	// scratch, reused from call to call; pinned, stay and gone are all
	// false between calls
	pinned, stay, gone []bool
	kept, pins, stays  []int
	tmp                []int
	stayed, pinnedTalk []int // running sums: see sumStays
}

// lastCall is what a compression depends on besides the messages read.
type lastCall struct {
	read, budget, total int // total: the messages' and the card block's tokens
	card                *Card
	changes             uint64 // the card's count of changes
	text                string // the card's text, which Inject will put in
}

// What Compress may do with a message, besides eliding its tool results.
const (
	// kindOther: none of the passes drops it (system prompts, tool
	// messages without a result); the opening may.
	kindOther uint8 = iota
	// kindTalk: the assistant's small talk (no tool call or result),
	// dropped by the second pass.
	kindTalk
	// kindExchange: it heads a tool exchange, dropped with the tool
	// messages that answer it by the second pass unless one of them must
	// stay.
	kindExchange
	// kindMember: a tool message answering an earlier one's call, dropped
	// with it.
	kindMember
	// kindUserTalk: a message from the user (the guard's feedback too)
	// without tool calls or results, dropped by the third pass unless
	// pinned.
	kindUserTalk
)

// bulkyPart is a tool result part over ElideMin tokens.
type bulkyPart struct{ part, tokens int }

const (
	flagUser   = 1 << iota // a user turn: from the user, not the guard's feedback
	flagCall               // has a tool call
	flagResult             // has a tool result
)

// elisionNote replaces a tool result of tokens tokens.
func elisionNote(tokens int) string {
	return fmt.Sprintf("[agentguard: tool result of %d tokens elided]", tokens)
}

// Compress is Compress for the conversation z follows.
//
// Each pass of Compress walks the messages before the last user message
// (tail) from the oldest, eliding or dropping, until they fit. Where a
// pass stops is where the running sum of what it saves first covers the
// excess; the running sums are kept as messages are read (z.elide,
// z.units, z.talk), so that a binary search finds it. What the sums count
// and a pass does not do — exchanges that must stay, pinned user turns —
// is subtracted: they are as few as the active constraints and the
// exchanges open at the tail. What is kept is then listed from indexes of
// the messages by kind, and the opening fixed, in what it costs to list
// what is kept.
func (z *Compressor) Compress(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
	z.update(messages)
	r := CompressReport{Budget: budget, Messages: len(messages), Kept: len(messages)}
	reserve := 0
	if budget > 0 && c != nil {
		if text := c.Text(); text != "" {
			if text != z.card {
				z.card, z.cardTokens = text, trace.EstimateTokens(CardBegin+"\n"+text+"\n"+CardEnd)+2
			}
			reserve = z.cardTokens
			if !z.system {
				reserve += messageOverhead
			}
		}
	}
	total := reserve + z.total
	r.TokensBefore, r.TokensAfter = total, total
	if budget <= 0 || total <= budget {
		return slices.Clip(messages), r
	}

	call := lastCall{read: z.read, budget: budget, total: total, card: c}
	if c != nil {
		call.changes, call.text = c.changes(), c.Text()
	}
	if z.lastOut != nil && call == z.lastCall {
		return z.lastOut, z.lastRep
	}
	out, r := z.compress(messages, budget, total, c, r)
	z.lastCall, z.lastOut, z.lastRep = call, out, r
	return out, r
}

// compress is Compress over budget: total, the tokens of messages and
// the card's block, is over budget.
func (z *Compressor) compress(messages []llms.MessageContent, budget, total int, c *Card, r CompressReport) ([]llms.MessageContent, CompressReport) {
	n := len(messages)
	tail := 0 // the last user message: it and what follows stay
	if len(z.users) > 0 {
		tail = z.users[len(z.users)-1]
	}
	z.pin(c)
	defer z.unpin()

	// 1. Elide bulky tool results, from the oldest, until they fit.
	if need := total - budget; z.elide[tail] >= need {
		stop := searchFirst(tail, func(x int) bool { return z.elide[x] >= need })
		return z.elideBefore(messages, stop, total-z.elide[stop], r)
	}
	total -= z.elide[tail]
	z.markStays(tail, n)
	z.sumStays()

	// 2. Drop the oldest tool exchanges and the assistant's small talk;
	// 3. then the oldest of the user's turns that state nothing pinned.
	var kept []int
	if need := total - budget; z.dropped2(tail) >= need {
		var saved int
		kept, saved = z.dropExchanges(tail, n, need)
		total -= saved
	} else {
		total -= z.dropped2(tail)
		var saved int
		kept, saved = z.dropUserTurns(tail, n, total-budget)
		total -= saved
		r.OverBudget = total > budget
	}
	z.kept = kept
	if len(kept) < n {
		total -= z.dropOpening(messages, kept, tail)
	}
	return z.keptMessages(messages, kept, tail, total, r)
}

// elideBefore returns messages with the bulky tool results of those
// before stop elided, and r completed with total, the tokens after: the
// first pass alone makes them fit.
func (z *Compressor) elideBefore(messages []llms.MessageContent, stop, total int, r CompressReport) ([]llms.MessageContent, CompressReport) {
	out := make([]llms.MessageContent, 0, len(messages)) // they fit: there are at most budget/messageOverhead
	for i, m := range messages {
		if i < stop && z.saving[i] > 0 {
			m.Parts = z.note(messages, i)
			r.Elided = append(r.Elided, i)
		}
		out = append(out, m)
	}
	r.Pinned = slices.Clone(z.pins)
	r.TokensAfter = total
	return out, r
}

// markStays marks, in z.stay and, in increasing order, z.stays, the
// exchanges before the tail that must stay: pinned ones, and those with a
// result at or after the tail.
func (z *Compressor) markStays(tail, n int) {
	z.stays = z.stays[:0]
	for _, i := range z.pins {
		if z.kind[i] == kindExchange {
			z.markStay(i)
		}
	}
	for i := tail; i < n; i++ {
		if z.kind[i] == kindMember && z.group[i] < tail {
			z.markStay(z.group[i])
		}
	}
	slices.Sort(z.stays)
}

// markStay marks the exchange that message h heads as one that stays.
func (z *Compressor) markStay(h int) {
	if !z.stay[h] {
		z.stay[h] = true
		z.stays = append(z.stays, h)
	}
}

// sumStays sets the running sums of what the passes' sums count and they
// do not drop: z.stayed[k], the units of the exchanges z.stays[:k] that
// stay; z.pinnedTalk[k], the cost of the user messages among the pinned
// z.pins[:k].
func (z *Compressor) sumStays() {
	stayed, pinnedTalk := z.stayed[:0], z.pinnedTalk[:0]
	stayed, pinnedTalk = append(stayed, 0), append(pinnedTalk, 0)
	for k, h := range z.stays {
		stayed = append(stayed, stayed[k]+z.unit[h])
	}
	for k, i := range z.pins {
		s := pinnedTalk[k]
		if z.kind[i] == kindUserTalk {
			s += z.cost[i]
		}
		pinnedTalk = append(pinnedTalk, s)
	}
	z.stayed, z.pinnedTalk = stayed, pinnedTalk
}

// dropped2 returns what the second pass saves on the messages before x.
func (z *Compressor) dropped2(x int) int { return z.units.sum(x) - z.stayed[lowerBound(z.stays, x)] }

// dropped3 returns what the third pass saves on the messages before x.
func (z *Compressor) dropped3(x int) int { return z.talk[x] - z.pinnedTalk[lowerBound(z.pins, x)] }

// dropExchanges is the second pass, which saves need: it returns the
// messages it keeps, in increasing order, and what it saves. Before where
// it stops, the user's messages, the others and the exchanges that stay
// are kept; after it, all but the results of exchanges dropped before it.
func (z *Compressor) dropExchanges(tail, n, need int) (kept []int, saved int) {
	stop := searchFirst(tail, func(x int) bool { return z.dropped2(x) >= need })
	kept = mergeSorted(z.kept[:0], z.humans[:lowerBound(z.humans, stop)], z.others[:lowerBound(z.others, stop)])
	kept = z.keepStays(kept, stop)
	for i := stop; i < n; i++ {
		if z.kind[i] == kindMember && i < tail {
			if h := z.group[i]; h < stop && !z.stay[h] {
				continue
			}
		}
		kept = append(kept, i)
	}
	return kept, z.dropped2(stop)
}

// dropUserTurns is the second pass over all it can drop and the third,
// which saves need when it can: it returns the messages they keep, in
// increasing order, and what the third saves. Before the tail, the pinned
// user messages, the user's after where it stops, the others and the
// exchanges that stay are kept.
func (z *Compressor) dropUserTurns(tail, n, need int) (kept []int, saved int) {
	stop := tail
	if z.dropped3(tail) >= need {
		stop = searchFirst(tail, func(x int) bool { return z.dropped3(x) >= need })
	}
	users := z.tmp[:0]
	for _, i := range z.pins[:lowerBound(z.pins, stop)] {
		if z.kind[i] == kindUserTalk {
			users = append(users, i)
		}
	}
	users = append(users, z.humans[lowerBound(z.humans, stop):lowerBound(z.humans, tail)]...)
	kept = mergeSorted(z.kept[:0], users, z.others[:lowerBound(z.others, tail)])
	z.tmp = users
	kept = z.keepStays(kept, tail)
	for i := tail; i < n; i++ {
		kept = append(kept, i)
	}
	return kept, z.dropped3(stop)
}

// dropOpening marks in z.gone what is left before the first kept user
// message, which answers a question that was dropped, so that the
// conversation opens with the user; it returns what that saves.
func (z *Compressor) dropOpening(messages []llms.MessageContent, kept []int, tail int) (saved int) {
	for _, i := range kept {
		if i >= tail {
			break
		}
		switch {
		case z.gone[i] || messages[i].Role == llms.ChatMessageTypeSystem:
			continue
		case messages[i].Role == llms.ChatMessageTypeHuman:
			return saved
		case z.kind[i] == kindTalk:
		case z.kind[i] == kindMember || z.pinned[i] || z.stay[i]:
			return saved
		}
		z.gone[i] = true
		saved += z.cost[i] - z.saving[i]
		for _, j := range z.members[i] {
			z.gone[j] = true
			saved += z.cost[j] - z.saving[j]
		}
	}
	return saved
}

// keptMessages returns the kept messages that are not gone, with the bulky
// tool results of those before the tail elided, and r completed with
// them and total, the tokens after. It clears z.gone.
func (z *Compressor) keptMessages(messages []llms.MessageContent, kept []int, tail, total int, r CompressReport) ([]llms.MessageContent, CompressReport) {
	n := len(messages)
	out := make([]llms.MessageContent, 0, len(kept))
	r.Dropped = make(Runs, 0, min(len(kept), n-len(kept))+1) // a run before each message kept, at most
	next := 0                                                // the first index not yet kept or dropped
	for _, i := range kept {
		if z.gone[i] {
			z.gone[i] = false
			continue
		}
		if next < i {
			r.Dropped = append(r.Dropped, [2]int{next, i})
		}
		next = i + 1
		m := messages[i]
		if i < tail && z.saving[i] > 0 {
			m.Parts = z.note(messages, i)
			r.Elided = append(r.Elided, i)
		}
		if z.pinned[i] {
			r.Pinned = append(r.Pinned, i)
		}
		out = append(out, m)
	}
	if len(r.Dropped) == 0 {
		r.Dropped = nil
	}
	r.TokensAfter, r.Kept = total, len(out)
	return out, r
}

// keepStays merges into kept, sorted and all below limit, the exchanges
// that stay and their tool messages below limit.
func (z *Compressor) keepStays(kept []int, limit int) []int {
	if len(z.stays) == 0 {
		return kept
	}
	from := len(kept)
	for _, h := range z.stays {
		if h >= limit {
			break
		}
		kept = append(kept, h)
		for _, j := range z.members[h] {
			if j < limit {
				kept = append(kept, j)
			}
		}
	}
	if len(kept) == from {
		return kept
	}
	slices.Sort(kept[from:])
	z.tmp = mergeSorted(z.tmp[:0], kept[:from], kept[from:])
	return append(kept[:0], z.tmp...)
}

// pin marks the user messages that state an active constraint the card's
// text shows (of ids, the latest: a chat naming a new order in every turn
// does not keep every turn), in z.pinned and, in increasing order, z.pins.
func (z *Compressor) pin(c *Card) {
	z.pins = z.pins[:0]
	if c == nil {
		return
	}
	c.mu.RLock()
	c.shown(func(i int) {
		if turn := c.all[i].Turn; turn >= 0 && turn < len(z.users) {
			if i := z.users[turn]; !z.pinned[i] {
				z.pinned[i] = true
				z.pins = append(z.pins, i)
			}
		}
	})
	c.mu.RUnlock()
	slices.Sort(z.pins)
}

// unpin clears what pin and Compress marked.
func (z *Compressor) unpin() {
	for _, i := range z.pins {
		z.pinned[i] = false
	}
	for _, i := range z.stays {
		z.stay[i] = false
	}
	z.stays = z.stays[:0]
}

// note returns the parts of message i with its bulky tool results elided.
func (z *Compressor) note(messages []llms.MessageContent, i int) []llms.ContentPart {
	if np, ok := z.notes[i]; ok {
		return np
	}
	np := slices.Clone(messages[i].Parts)
	for _, b := range z.bulky[i] {
		tr := np[b.part].(llms.ToolCallResponse)
		tr.Content = elisionNote(b.tokens)
		np[b.part] = tr
	}
	if z.notes == nil {
		z.notes = map[int][]llms.ContentPart{}
	}
	z.notes[i] = np
	return np
}

// searchFirst returns the least x in [1, n] for which ok(x) holds, where
// ok is monotone and ok(n) holds.
func searchFirst(n int, ok func(x int) bool) int {
	return 1 + sort.Search(n-1, func(j int) bool { return ok(j + 1) })
}

// lowerBound returns the number of elements of the sorted s below x.
func lowerBound(s []int, x int) int {
	k, _ := slices.BinarySearch(s, x)
	return k
}

// mergeSorted appends to dst the merge of the sorted a and b, which may
// not overlap dst's spare capacity.
func mergeSorted(dst, a, b []int) []int {
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			dst, a = append(dst, a[0]), a[1:]
		} else {
			dst, b = append(dst, b[0]), b[1:]
		}
	}
	dst = append(dst, a...)
	return append(dst, b...)
}

// fenwick holds running sums of values that change after they are
// added: sum and add cost O(log n). Node k (from 1) holds the sum of the
// values from k-lowbit(k) up to, not including, k (from 0).
type fenwick []int

// sum returns the sum of the values before x.
func (f fenwick) sum(x int) int {
	s := 0
	for k := x; k > 0; k &= k - 1 {
		s += f[k-1]
	}
	return s
}

// push appends value v.
func (f *fenwick) push(v int) {
	k := len(*f) + 1
	*f = append(*f, v+f.sum(k-1)-f.sum(k-k&-k))
}

// add adds d to value i.
func (f fenwick) add(i, d int) {
	for k := i + 1; k <= len(f); k += k & -k {
		f[k-1] += d
	}
}

// update reads the messages added since the last call, or all of them
// when the conversation is not the one read before.
func (z *Compressor) update(messages []llms.MessageContent) {
	if z.changed(messages) {
		z.restart()
	}
	if z.owner == nil {
		z.owner = map[string]int{}
		z.lastCaller = -1
		z.elide, z.talk = append(z.elide, 0), append(z.talk, 0)
	}
	if add := len(messages) - z.read; add > 0 {
		z.grow(add)
	}
	for i := z.read; i < len(messages); i++ {
		z.readMessage(i, messages[i])
	}
	if len(messages) > z.read {
		z.seen = z.seen.add(messages[z.read:])
		z.last = copyMessage(messages[len(messages)-1])
	}
	z.read = len(messages)
}

// changed reports whether messages are not the conversation z read:
// fewer, or with one of those read replaced or changed.
func (z *Compressor) changed(messages []llms.MessageContent) bool {
	return z.read > len(messages) || z.read > 0 && (!z.seen.match(messages) || !sameMessage(messages[z.read-1], z.last))
}

// restart forgets every message z read, keeping its scratch space.
func (z *Compressor) restart() {
	*z = Compressor{
		pinned: z.pinned[:0], stay: z.stay[:0], gone: z.gone[:0],
		kept: z.kept[:0], pins: z.pins[:0], stays: z.stays[:0], tmp: z.tmp[:0], stayed: z.stayed[:0], pinnedTalk: z.pinnedTalk[:0],
	}
}

// grow makes room for add more messages in what z keeps of each.
func (z *Compressor) grow(add int) {
	z.cost, z.flags, z.kind, z.group = slices.Grow(z.cost, add), slices.Grow(z.flags, add), slices.Grow(z.kind, add), slices.Grow(z.group, add)
	z.saving, z.elide, z.talk, z.unit = slices.Grow(z.saving, add), slices.Grow(z.elide, add), slices.Grow(z.talk, add), slices.Grow(z.unit, add)
	z.units = slices.Grow(z.units, add)
	z.pinned, z.stay, z.gone = slices.Grow(z.pinned, add), slices.Grow(z.stay, add), slices.Grow(z.gone, add)
}

// readMessage reads message i, the next one: what it costs, what eliding
// it saves, the exchange it belongs to and what Compress may do with it.
func (z *Compressor) readMessage(i int, m llms.MessageContent) {
	c := messageTokens(m)
	z.cost = append(z.cost, c)
	z.total += c
	var f uint8
	if hasToolCall(m) {
		f |= flagCall
	}
	saving := 0
	if isToolResult(m) {
		f |= flagResult
		saving = z.noteBulky(i, m)
	}
	g := i
	switch {
	case m.Role == llms.ChatMessageTypeHuman && !isFeedback(m):
		f |= flagUser
		z.users = append(z.users, i)
	case f&flagCall != 0:
		z.lastCaller = i
		for _, p := range m.Parts {
			if tc, ok := p.(llms.ToolCall); ok && tc.ID != "" {
				z.owner[tc.ID] = i
			}
		}
	case f&flagResult != 0:
		g = z.exchangeOf(i, m)
	}
	if m.Role == llms.ChatMessageTypeSystem {
		z.system = true
	}
	k, unit, talk := z.classify(i, g, m, f, c, saving)
	z.flags = append(z.flags, f)
	z.kind = append(z.kind, k)
	z.group = append(z.group, g)
	z.saving = append(z.saving, saving)
	z.elide = append(z.elide, z.elide[i]+saving)
	z.talk = append(z.talk, z.talk[i]+talk)
	z.unit = append(z.unit, unit)
	z.units.push(unit)
	z.pinned = append(z.pinned, false)
	z.stay = append(z.stay, false)
	z.gone = append(z.gone, false)
}

// noteBulky notes the bulky tool results of message i, m, in z.bulky and
// returns what eliding them saves.
func (z *Compressor) noteBulky(i int, m llms.MessageContent) (saving int) {
	for j, p := range m.Parts {
		if tr, ok := p.(llms.ToolCallResponse); ok {
			if t := trace.EstimateTokens(tr.Content); t > ElideMin {
				if z.bulky == nil {
					z.bulky = map[int][]bulkyPart{}
				}
				z.bulky[i] = append(z.bulky[i], bulkyPart{j, t})
				saving += t - trace.EstimateTokens(elisionNote(t))
			}
		}
	}
	return saving
}

// exchangeOf returns the message heading the exchange that message i, m,
// a tool result, belongs to: the one that made the first call it answers
// by id, else the last message with tool calls; i when there is none, so
// that it is a group of its own.
func (z *Compressor) exchangeOf(i int, m llms.MessageContent) int {
	for _, p := range m.Parts {
		if tr, ok := p.(llms.ToolCallResponse); ok {
			if o, ok := z.owner[tr.ToolCallID]; ok {
				return o
			}
		}
	}
	if z.lastCaller < 0 {
		return i // answers no call: a group of its own
	}
	return z.lastCaller
}

// classify returns what Compress may do with message i, m, of group g,
// costing c of which eliding saves saving, and what dropping it saves the
// second pass (unit) and the third (talk); it files the message under its
// kind: as a member of its exchange, in z.humans or in z.others.
func (z *Compressor) classify(i, g int, m llms.MessageContent, f uint8, c, saving int) (k uint8, unit, talk int) {
	switch {
	case g != i:
		k = kindMember
		if z.members == nil {
			z.members = map[int][]int{}
		}
		z.members[g] = append(z.members[g], i)
		z.unit[g] += c - saving
		z.units.add(g, c-saving)
	case f&(flagCall|flagResult) != 0:
		k, unit = kindExchange, c-saving
	case m.Role == llms.ChatMessageTypeAI || m.Role == llms.ChatMessageTypeGeneric:
		k, unit = kindTalk, c
	case m.Role == llms.ChatMessageTypeHuman:
		k, talk = kindUserTalk, c
		z.humans = append(z.humans, i)
	default:
		z.others = append(z.others, i)
	}
	return k, unit, talk
}

// messageOverhead is what a message costs beyond its parts: role and
// framing.
const messageOverhead = 4

// messageTokens estimates what a message costs a model; the card block of
// a system message is left out, as Inject replaces it.
func messageTokens(m llms.MessageContent) int {
	n := messageOverhead
	for _, p := range m.Parts {
		n += partTokens(p)
	}
	return n
}

func partTokens(p llms.ContentPart) int {
	switch p := p.(type) {
	case llms.TextContent:
		if strings.Contains(p.Text, CardBegin) {
			return trace.EstimateTokens(stripBlocks(p.Text))
		}
		return trace.EstimateTokens(p.Text)
	case llms.ToolCall:
		n := 3
		if p.FunctionCall != nil {
			n += trace.EstimateTokens(p.FunctionCall.Name) + trace.EstimateTokens(p.FunctionCall.Arguments)
		}
		return n
	case llms.ToolCallResponse:
		return 3 + trace.EstimateTokens(p.Content)
	case llms.CachedContent:
		return partTokens(p.ContentPart)
	default: // images and binary data: a low-detail image's price
		return 85
	}
}

// A message replaced since it was read has other parts: marks are the
// messages read, by the address and length of their parts, compact so that
// checking a conversation of thousands of messages costs a microsecond or
// two.
type marks []mark

type mark struct {
	p *llms.ContentPart
	n int
}

func markOf(m llms.MessageContent) mark {
	if len(m.Parts) == 0 {
		return mark{}
	}
	return mark{&m.Parts[0], len(m.Parts)}
}

// add returns k with messages marked after it.
func (k marks) add(messages []llms.MessageContent) marks {
	for _, m := range messages {
		k = append(k, markOf(m))
	}
	return k
}

// match reports whether the first len(k) messages are those marked.
func (k marks) match(messages []llms.MessageContent) bool {
	if len(k) > len(messages) {
		return false
	}
	for i, m := range k {
		if markOf(messages[i]) != m {
			return false
		}
	}
	return true
}

// sameMessage reports whether m is what was read as seen, by value.
func sameMessage(m, seen llms.MessageContent) bool {
	return m.Role == seen.Role && slices.EqualFunc(m.Parts, seen.Parts, samePart)
}

func samePart(p, q llms.ContentPart) bool {
	switch p := p.(type) {
	case llms.TextContent:
		q, ok := q.(llms.TextContent)
		return ok && p == q
	case llms.ToolCallResponse:
		q, ok := q.(llms.ToolCallResponse)
		return ok && p == q
	case llms.ToolCall:
		q, ok := q.(llms.ToolCall)
		return ok && p.ID == q.ID && p.Type == q.Type && (p.FunctionCall == q.FunctionCall ||
			p.FunctionCall != nil && q.FunctionCall != nil && *p.FunctionCall == *q.FunctionCall)
	}
	return reflect.DeepEqual(p, q)
}

// copyMessage returns m with its own Parts, so that a caller changing the
// parts in place is seen to have changed it.
func copyMessage(m llms.MessageContent) llms.MessageContent {
	m.Parts = slices.Clone(m.Parts)
	for i, p := range m.Parts {
		if tc, ok := p.(llms.ToolCall); ok && tc.FunctionCall != nil {
			fc := *tc.FunctionCall
			tc.FunctionCall = &fc
			m.Parts[i] = tc
		}
	}
	return m
}

func hasToolCall(m llms.MessageContent) bool {
	for _, p := range m.Parts {
		if _, ok := p.(llms.ToolCall); ok {
			return true
		}
	}
	return false
}

func isToolResult(m llms.MessageContent) bool {
	for _, p := range m.Parts {
		if _, ok := p.(llms.ToolCallResponse); ok {
			return true
		}
	}
	return false
}

// isFeedback reports whether a user message is the guard's own retry
// feedback, which is not a user turn.
func isFeedback(m llms.MessageContent) bool {
	if len(m.Parts) != 1 {
		return false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && strings.HasPrefix(t.Text, "[agentguard] ")
}
