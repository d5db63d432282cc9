package memory

import (
	"slices"
	"testing"
)

// cuesByWord is what wordHits.cues must return: one eachWord search per
// word, list after list.
func cuesByWord(s string, lists ...[]string) []cue {
	var all []cue
	for l, words := range lists {
		for _, w := range words {
			eachWord(s, w, func(start, end int) bool {
				all = append(all, cue{start, end, l})
				return true
			})
		}
	}
	return pickCues(all)
}

// checkWordIndex compares the default extractor's word index with one
// search per word on s.
func checkWordIndex(t *testing.T, s string) {
	t.Helper()
	r := defaultRules()
	m := &r.w.Memory
	lists := [][]string{m.Change, m.Additional, m.Dismiss, m.AddressWords, m.PhoneCues,
		m.Reminder, m.Report, m.Unruled, m.Negation, m.Allow, m.ScopeEnd,
		m.TimeContext, m.PastDue, m.Away, m.Prefer, m.ReplyVerbs,
		m.Languages, m.TimesOfDay, r.idWords}
	for _, ch := range m.Channels {
		lists = append(lists, ch.Words)
	}
	for _, k := range m.TimeKeys {
		lists = append(lists, k.Words)
	}
	h := r.ix.find(s)
	for l, words := range lists {
		if got, want := h.has(l), hasWord(s, words); got != want {
			t.Errorf("%q: list %d %q: has = %v, hasWord = %v", s, l, words, got, want)
		}
	}
	ids := append([]int{r.l.negation, r.l.allow, r.l.scopeEnd}, r.l.channels...)
	var words [][]string
	for _, l := range ids {
		words = append(words, lists[l])
	}
	if got, want := h.cues(ids...), cuesByWord(s, words...); !slices.Equal(got, want) {
		t.Errorf("%q: cues = %v, want %v", s, got, want)
	}
}

func TestWordIndex(t *testing.T) {
	for _, s := range []string{
		"",
		"please don't text me, calls are fine after 6pm",
		"no more sms or e-mail; i'd rather you call",
		"don'tt text; texting is fine but no calls, i didn't get the text",
		"我不要短信，电话可以，但是别在晚上打",
		"消息推送那些就不必了，邮件也免了",
		"order #w1234567 and account 55, tracking number is 1z999",
		"it's my new address, also send one to 12 oak st",
		"'ll 've can't cannot text-message email*",
	} {
		checkWordIndex(t, lowerASCII(s))
	}
}

func FuzzWordIndex(f *testing.F) {
	for _, s := range []string{"don't text me", "短信不要", "sms, calls fine but no email", "order#123 's '"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkWordIndex(t, lowerASCII(s)) })
}

// TestWordIndexEveryWord tries every word of the default lexicon's lists
// alone, inside and at the edges of other words, and next to each other.
func TestWordIndexEveryWord(t *testing.T) {
	r := defaultRules()
	var all []string
	for _, w := range r.ix.words {
		all = append(all, w.stem)
	}
	for i, w := range all {
		for _, s := range []string{w, w + "s", "x" + w, "'" + w + "'", w + "'s", "a " + w + ", " + all[(i+1)%len(all)] + all[(i+7)%len(all)]} {
			checkWordIndex(t, s)
		}
	}
}
