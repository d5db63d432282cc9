package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// observeAll observes each text as the next turn with RuleBased.
func observeAll(t testing.TB, texts ...string) *Card {
	t.Helper()
	c := &Card{}
	for k, text := range texts {
		if _, err := c.Observe(context.Background(), RuleBased(nil), k, text); err != nil {
			t.Fatalf("turn %d: %v", k, err)
		}
	}
	return c
}

func TestCardHistory(t *testing.T) {
	tests := []struct {
		name        string
		turns       []string
		wantActive  []string
		wantHistory []Constraint
	}{
		{
			name:       "address superseded",
			turns:      []string{"My address is 12 Oak Street, Springfield.", "ok", "My address is now 48 Pine Avenue, Shelbyville."},
			wantActive: []string{"address delivery=48 Pine Avenue, Shelbyville"},
			wantHistory: []Constraint{
				{Kind: KindAddress, Key: "delivery", Value: "12 Oak Street, Springfield", Turn: 0, Status: Superseded, Source: SourceRule, Ended: 2},
				{Kind: KindAddress, Key: "delivery", Value: "48 Pine Avenue, Shelbyville", Turn: 2, Status: Active, Source: SourceRule},
			},
		},
		{
			name:       "restating keeps the first statement",
			turns:      []string{"地址改成上海市浦东新区世纪大道100号", "送到上海市浦东新区世纪大道 100 号"},
			wantActive: []string{"address delivery=上海市浦东新区世纪大道100号"},
			wantHistory: []Constraint{
				{Kind: KindAddress, Key: "delivery", Value: "上海市浦东新区世纪大道100号", Turn: 0, Status: Active, Source: SourceRule},
			},
		},
		{
			name:       "prohibition revoked, then stated again",
			turns:      []string{"不要给我发短信", "可以发短信了", "Stop texting me."},
			wantActive: []string{"prohibition sms=Stop texting me"},
			wantHistory: []Constraint{
				{Kind: KindProhibition, Key: "sms", Value: "不要给我发短信", Turn: 0, Status: Revoked, Source: SourceRule, Ended: 1},
				{Kind: KindProhibition, Key: "sms", Value: "Stop texting me", Turn: 2, Status: Active, Source: SourceRule},
			},
		},
		{
			name:       "a preferred channel that is then prohibited",
			turns:      []string{"I prefer text messages.", "Actually, don't text me."},
			wantActive: []string{"prohibition sms=Actually", "prohibition sms=don't text me"}[1:],
			wantHistory: []Constraint{
				{Kind: KindPreference, Key: "channel", Value: "sms", Turn: 0, Status: Revoked, Source: SourceRule, Ended: 1},
				{Kind: KindProhibition, Key: "sms", Value: "don't text me", Turn: 1, Status: Active, Source: SourceRule},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := observeAll(t, tt.turns...)
			if got := short(c.Active()); !slices.Equal(got, tt.wantActive) {
				t.Errorf("Active = %q, want %q", got, tt.wantActive)
			}
			if got := c.History(); !slices.Equal(got, tt.wantHistory) {
				t.Errorf("History =\n%+v\nwant\n%+v", got, tt.wantHistory)
			}
		})
	}
}

func TestCardText(t *testing.T) {
	c := observeAll(t,
		"My address is 12 Oak Street, Springfield.",
		"我的订单号是A1004",
		"Please don't call me.",
		"My name is Li Lei.",
		"Deliver between 1 and 5 June please.",
		"My address is now 48 Pine Avenue, Shelbyville.",
		"另外，不要自动给我发短信通知，有事在这里说就行。",
		"Actually, calls are fine now.",
		"Please remember that the doorbell is broken.",
	)
	want := `Pinned user constraints (must be respected):
- prohibition sms: 不要自动给我发短信通知 (turn 6)
- address delivery: 48 Pine Avenue, Shelbyville (turn 5, replaces "12 Oak Street, Springfield" from turn 0)
- time range delivery: 06-01..06-05 (turn 4)
- name: Li Lei (turn 3)
- id order: A1004 (turn 1)
- fact: the doorbell is broken (turn 8)
- no longer prohibited: call (lifted in turn 7)`
	if got := c.Text(); got != want {
		t.Errorf("Text =\n%s\nwant\n%s", got, want)
	}
	if got := (&Card{}).Text(); got != "" {
		t.Errorf("empty card text = %q", got)
	}
}

func TestCardJSON(t *testing.T) {
	c := observeAll(t, "My address is 12 Oak Street, Springfield.", "Don't text me <b>ever</b> & don't call.", "My address is now 48 Pine Avenue.")
	b, err := c.MarshalJSON() // json.Marshal would escape <, > and & again
	if err != nil {
		t.Fatal(err)
	}
	want := `{"constraints":[` +
		`{"kind":"address","key":"delivery","value":"12 Oak Street, Springfield","turn":0,"status":"superseded","source":"rule","ended":2},` +
		`{"kind":"prohibition","key":"sms","value":"Don't text me <b>ever</b> & don't call","turn":1,"status":"active","source":"rule"},` +
		`{"kind":"prohibition","key":"call","value":"Don't text me <b>ever</b> & don't call","turn":1,"status":"active","source":"rule"},` +
		`{"kind":"address","key":"delivery","value":"48 Pine Avenue","turn":2,"status":"active","source":"rule"}]}`
	if string(b) != want {
		t.Errorf("JSON =\n%s\nwant\n%s", b, want)
	}
	var back Card
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.History(), c.History()) || back.Text() != c.Text() {
		t.Errorf("round trip: %+v, want %+v", back.History(), c.History())
	}
	if b, _ := json.Marshal(&Card{}); string(b) != `{"constraints":[]}` {
		t.Errorf("empty card JSON = %s", b)
	}

	for _, bad := range []string{
		`{"constraints":[{"kind":"mood","key":"x","turn":0,"status":"active"}]}`,
		`{"constraints":[{"kind":"fact","key":"","turn":0,"status":"active"}]}`,
		`{"constraints":[{"kind":"fact","key":"x","turn":-1,"status":"active"}]}`,
		`{"constraints":[{"kind":"fact","key":"x","turn":0,"status":"maybe"}]}`,
		`{"constraints":[{"kind":"fact","key":"X","turn":0,"status":"active"}]}`,
		`{"constraints":[{"kind":"fact","key":"x","value":"a\nb","turn":0,"status":"active"}]}`,
		`{"constraints":{}}`,
		`[`,
	} {
		back := observeAll(t, "Don't text me.")
		err := json.Unmarshal([]byte(bad), back)
		if err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
		var me *Error
		if json.Valid([]byte(bad)) && !errors.As(err, &me) {
			t.Errorf("Unmarshal(%s) error %v is not a *memory.Error", bad, err)
		}
		if len(back.Active()) != 1 {
			t.Errorf("Unmarshal(%s) changed the card", bad)
		}
	}
}

func TestCardApply(t *testing.T) {
	var c Card
	err := c.Apply(
		Constraint{Kind: KindPhone, Key: "mobile", Value: "+8613800001111", Turn: 1, Status: Active},
		Constraint{Kind: "mood", Key: "x", Turn: 1, Status: Active},
		Constraint{Kind: KindPhone, Key: "mobile", Value: "1", Turn: 1, Status: Superseded},
		Constraint{Kind: KindPhone, Key: "mobile", Value: "+8613900002222", Turn: 2, Status: Active},
		Constraint{Kind: KindFact, Key: "nothing-to-lift", Turn: 3, Status: Revoked},
	)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown kind "mood"`) || !strings.Contains(err.Error(), "cannot be superseded") {
		t.Errorf("Apply error = %v", err)
	}
	if got, want := short(c.History()), []string{"phone mobile=+8613800001111", "phone mobile=+8613900002222"}; !slices.Equal(got, want) {
		t.Errorf("History = %q, want %q", got, want)
	}
}

func TestCardObserveErrors(t *testing.T) {
	bad := ExtractorFunc(func(context.Context, int, string, []Constraint) ([]Constraint, error) {
		return []Constraint{
			{Kind: KindProhibition, Key: " Text messages ", Value: "none"},
			{Kind: KindFact, Key: ""},
		}, errors.New("half broken")
	})
	var c Card
	got, err := c.Observe(context.Background(), bad, 4, "whatever")
	if err == nil || !strings.Contains(err.Error(), "half broken") || !errors.Is(err, ErrInvalid) {
		t.Errorf("error = %v, want the extractor's and an invalid constraint", err)
	}
	want := []Constraint{{Kind: KindProhibition, Key: "sms", Value: "none", Turn: 4, Status: Active}}
	if !slices.Equal(got, want) || !slices.Equal(c.Active(), want) {
		t.Errorf("Observe = %+v, card %+v, want %+v", got, c.Active(), want)
	}
}

func TestCardConcurrent(t *testing.T) {
	var c Card
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 20 {
				turn := g*20 + k
				if _, err := c.Observe(context.Background(), nil, turn, "不要给我发短信。My address is now "+strings.Repeat("1", g%5+1)+" Main St."); err != nil {
					t.Error(err)
				}
				_ = c.Text()
				_ = c.Active()
				_, _ = json.Marshal(&c)
			}
		})
	}
	wg.Wait()
	active := c.Active()
	if len(active) != 2 {
		t.Errorf("Active = %+v, want one prohibition and one address", active)
	}
}

// TestCardActiveOf: the active constraints of a kind, each with what it
// replaced, latest first; nothing of other kinds.
func TestCardActiveOf(t *testing.T) {
	var c Card
	for _, turn := range []struct {
		n    int
		text string
	}{{0, "My address is 12 Oak Street, Springfield."}, {1, "Please don't text me."}, {2, "Actually, my address is now 34 Elm Road, Shelbyville."}, {3, "My address is now 9 Bay Road, Ogdenville."}} {
		if _, err := c.Observe(context.Background(), nil, turn.n, turn.text); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, k := range c.ActiveOf(KindAddress) {
		got = append(got, fmt.Sprintf("%s %s", k.Status, k.Value))
	}
	want := []string{"active 9 Bay Road, Ogdenville", "superseded 34 Elm Road, Shelbyville", "superseded 12 Oak Street, Springfield"}
	if !slices.Equal(got, want) {
		t.Errorf("addresses %q, want %q", got, want)
	}
	if ps := c.ActiveOf(KindProhibition); len(ps) != 1 || ps[0].Key != "sms" {
		t.Errorf("prohibitions %+v, want the sms ban", ps)
	}
}

// TestCardActiveOfBounded: a user who moves back and forth between two
// addresses all conversation long has replaced two, not hundreds; one who
// gives a new address every turn, the latest MaxReplaced.
func TestCardActiveOfBounded(t *testing.T) {
	for _, tt := range []struct {
		name    string
		address func(i int) string
		want    int
	}{
		{"two addresses in turn", func(i int) string {
			return []string{"My address is now 12 Oak Street, Springfield.", "我的地址改成北京市朝阳区建国路88号。"}[i%2]
		}, 2},
		{"a new address each turn", func(i int) string { return fmt.Sprintf("My address is now %d Oak Street, Springfield.", 10+i) }, 1 + MaxReplaced},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c Card
			for i := range 300 {
				if _, err := c.Observe(context.Background(), nil, i, tt.address(i)); err != nil {
					t.Fatal(err)
				}
			}
			got := c.ActiveOf(KindAddress)
			if len(got) != tt.want || got[0].Status != Active || got[0].Value != c.ActiveOf(KindAddress)[0].Value {
				t.Errorf("%d addresses, want %d: %+v", len(got), tt.want, got)
			}
		})
	}
}
