package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// short writes constraints as "kind key=value" or "-kind key" for
// revocations, to keep the table readable.
func short(cs []Constraint) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		if c.Status == Revoked {
			out[i] = fmt.Sprintf("-%s %s", c.Kind, c.Key)
			continue
		}
		out[i] = fmt.Sprintf("%s %s=%s", c.Kind, c.Key, c.Value)
	}
	return out
}

func TestRuleBased(t *testing.T) {
	smsOff := []Constraint{{Kind: KindProhibition, Key: "sms", Value: "no SMS", Status: Active}}
	callOff := []Constraint{{Kind: KindProhibition, Key: "call", Value: "no calls", Status: Active}}
	tests := []struct {
		text    string
		current []Constraint
		want    []string
	}{
		// Prohibitions, English.
		{"Please don't text me.", nil, []string{"prohibition sms=Please don't text me"}},
		{"Do not send me any SMS notifications", nil, []string{"prohibition sms=Do not send me any SMS notifications"}},
		{"Stop calling me!", nil, []string{"prohibition call=Stop calling me"}},
		{"No emails please", nil, []string{"prohibition email=No emails please"}},
		{"no calls before 9am", nil, []string{"prohibition call=before 09:00"}},
		{"Don't call me after 8 pm.", nil, []string{"prohibition call=after 20:00"}},
		{"I no longer want text messages.", nil, []string{"prohibition sms=I no longer want text messages"}},
		{"I'm not home so call me on my mobile", nil, nil},
		{"Don't forget to text me the code", nil, nil},
		{"Why don't you text me?", nil, nil},
		// Prohibitions, Chinese.
		{"另外，不要自动给我发短信通知，有事在这里说就行。", nil, []string{"prohibition sms=不要自动给我发短信通知"}},
		{"别打电话", nil, []string{"prohibition call=别打电话"}},
		{"请勿发邮件给我", nil, []string{"prohibition email=请勿发邮件给我"}},
		{"短信就不要发了", nil, []string{"prohibition sms=短信就不要发了"}},
		{"早上9点前不要打电话", nil, []string{"prohibition call=before 09:00"}},
		{"请不要打扰我", nil, []string{"prohibition contact=请不要打扰我"}},
		{"不要打电话联系我", nil, []string{"prohibition call=不要打电话联系我"}},
		{"别忘了给我发短信", nil, nil},
		{"我不想错过短信通知", nil, nil},
		{"I don't want to miss your calls", nil, nil},
		{"No problem texting me later", nil, nil},
		{"取消订单并短信通知我", nil, nil},
		{"有免费短信吗", nil, nil},
		{"关闭短信提醒", nil, []string{"prohibition sms=关闭短信提醒"}},
		{"请开启免打扰", nil, []string{"prohibition contact=请开启免打扰"}},
		{"你们会发短信通知吗？", nil, nil},
		// Revocations need an active prohibition.
		{"Actually, SMS is fine now.", smsOff, []string{"-prohibition sms"}},
		{"Actually, SMS is fine now.", nil, nil},
		{"You can text me again.", smsOff, []string{"-prohibition sms"}},
		{"I don't mind texts anymore", smsOff, []string{"-prohibition sms"}},
		{"You can't text me", smsOff, []string{"prohibition sms=You can't text me"}},
		{"可以发短信了", smsOff, []string{"-prohibition sms"}},
		{"现在可以给我打电话了", callOff, []string{"-prohibition call"}},
		{"短信通知也可以", smsOff, []string{"-prohibition sms"}},
		{"不可以发短信", smsOff, []string{"prohibition sms=不可以发短信"}},
		{"可以发短信吗？", smsOff, nil},
		{"Texting is fine now, but no calls.", smsOff, []string{"-prohibition sms", "prohibition call=but no calls"}},
		{"Don't text me. Actually, texting is fine.", nil, []string{"prohibition sms=Don't text me", "-prohibition sms"}},
		// Addresses.
		{"My address is now 48 Pine Avenue, Shelbyville.", nil, []string{"address delivery=48 Pine Avenue, Shelbyville"}},
		{"my billing address is 1 Main St, Springfield", nil, []string{"address billing=1 Main St, Springfield"}},
		{"Please change my address from 12 Oak Street to 9 Elm Road, Ogdenville thanks", nil, []string{"address delivery=9 Elm Road, Ogdenville"}},
		{"Ship it to 12 Oak St. Springfield please.", nil, []string{"address delivery=12 Oak St. Springfield"}},
		{"Send it to me at 7 Bay Road instead.", nil, []string{"address delivery=7 Bay Road"}},
		{"Can you ship it to 12 Oak Street?", nil, nil},
		{"Send the refund to my card ending 1234", nil, nil},
		{"地址改成上海市浦东新区世纪大道100号", nil, []string{"address delivery=上海市浦东新区世纪大道100号"}},
		{"麻烦送到杭州市西湖区文三路5号，谢谢", nil, []string{"address delivery=杭州市西湖区文三路5号"}},
		{"我的收货地址是北京市朝阳区建国路88号，对吧？", nil, []string{"address delivery=北京市朝阳区建国路88号"}},
		{"什么时候能送到？", nil, nil},
		{"已经送到小区门口了吗", nil, nil},
		// Phones.
		{"Call me at +1 415 555 0100.", nil, []string{"phone mobile=+14155550100"}},
		{"我的手机号是 139-0000-1002", nil, []string{"phone mobile=13900001002"}},
		{"手机号改成13800001111", nil, []string{"phone mobile=13800001111"}},
		// Names.
		{"My name is Li Lei.", nil, []string{"name name=Li Lei"}},
		{"my name is on the order", nil, nil},
		{"The recipient should be Zhang Wei", nil, []string{"name recipient=Zhang Wei"}},
		{"我叫李雷，订单号A1001", nil, []string{"name name=李雷", "id order:a1001=A1001"}},
		{"收件人改成韩梅梅", nil, []string{"name recipient=韩梅梅"}},
		// Ids.
		{"Where is order #A1001?", nil, []string{"id order:a1001=A1001"}},
		{"My account number is 88812345 and tracking SF1003", nil, []string{"id account:88812345=88812345", "id tracking:sf1003=SF1003"}},
		{"订单号是 20250601001", nil, []string{"id order:20250601001=20250601001"}},
		{"A1001 hasn't arrived", nil, []string{"id order:a1001=A1001"}},
		{"my order status please", nil, nil},
		// Time ranges.
		{"Deliver between 1 and 5 June please.", nil, []string{"time_range delivery=06-01..06-05"}},
		{"Please deliver from June 1 to June 5, 2025", nil, []string{"time_range delivery=06-01..2025-06-05"}},
		{"6月1日到6月5日之间送货比较好。", nil, []string{"time_range delivery=06-01..06-05"}},
		{"6月1日至5日送货", nil, []string{"time_range delivery=06-01..06-05"}},
		{"Pick up the return after June 3", nil, []string{"time_range pickup=after 06-03"}},
		{"请在6月10日之前送到", nil, []string{"time_range delivery=before 06-10"}},
		{"I'll be home after 9am.", nil, []string{"time_range delivery hours=after 09:00"}},
		{"上午9点以后送货", nil, []string{"time_range delivery hours=after 09:00"}},
		{"It should have arrived by June 3", nil, nil},
		{"I ordered on June 1", nil, nil},
		{"My parcel shipped on June 1", nil, nil},
		{"It was delivered on June 2.", nil, nil},
		{"Please deliver it on June 8.", nil, []string{"time_range delivery=06-08..06-08"}},
		{"请改成6月8日送货", nil, []string{"time_range delivery=06-08..06-08"}},
		{"6月3日已经送过一次了", nil, nil},
		{"I'm away from June 10 to June 14, so don't deliver then.", nil, []string{"prohibition delivery=06-10..06-14"}},
		{"6月10日到6月14日出差不在家", nil, []string{"prohibition delivery=06-10..06-14"}},
		// Preferences.
		{"I prefer email.", nil, []string{"preference channel=email"}},
		{"I prefer text messages", smsOff, []string{"preference channel=sms", "-prohibition sms"}},
		{"我更喜欢邮件联系", nil, []string{"preference channel=email"}},
		{"请用中文回复", nil, []string{"preference language=中文"}}, // a language to answer in is a preference
		{"I'd prefer English, please.", nil, []string{"preference language=English"}},
		{"我比较喜欢下午送货", nil, []string{"preference time=下午"}},
		// Facts.
		{"Please remember that I'm allergic to nuts.", nil, []string{"fact " + factKey("I'm allergic to nuts") + "=I'm allergic to nuts"}},
		{"请记住：我家门铃坏了，请敲门", nil, []string{"fact " + factKey("我家门铃坏了，请敲门") + "=我家门铃坏了，请敲门"}},
		{"麻烦帮我备注一下", nil, nil},
		// Nothing.
		{"", nil, nil},
		{"好的，谢谢。", nil, nil},
		{"Thanks, that's all.", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			cs, err := RuleBased(nil).Extract(context.Background(), 3, tt.text, tt.current)
			if err != nil {
				t.Fatal(err)
			}
			got := short(cs)
			slices.Sort(got) // the order within a turn carries no meaning
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("Extract(%q) = %q, want %q", tt.text, got, want)
			}
			for _, c := range cs {
				if err := c.Validate(); err != nil || c.Turn != 3 || c.Source != SourceRule {
					t.Errorf("constraint %+v: %v", c, err)
				}
			}
		})
	}
}

func TestChannelOf(t *testing.T) {
	for in, want := range map[string]string{
		"SMS": "sms", "text": "sms", "Text messages": "sms", "短信": "sms",
		"call": "call", "phone call": "call", "电话": "call",
		"email": "email", "E-mail": "email", "邮件": "email",
		"contact me": "contact", "打扰": "contact",
		"fax": "", "send sms": "", "": "",
	} {
		if got := channelOf(&defaultWords().Memory, in); got != want {
			t.Errorf("channelOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hi. My address is 12 Oak St. Springfield. Thanks!", []string{"Hi", "My address is 12 Oak St. Springfield", "Thanks"}},
		{"你好。不要发短信！可以吗？", []string{"你好", "不要发短信", "可以吗"}},
		{"It costs 3.5 dollars\nok", []string{"It costs 3.5 dollars", "ok"}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range sentences(&defaultWords().Memory, tt.in) {
			got = append(got, s.text)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("sentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if s := sentences(&defaultWords().Memory, "Can you text me?"); len(s) != 1 || !s[0].question {
		t.Errorf("a question: %+v", s)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"另外，不要自动给我发短信通知，有事在这里说就行。",
		"可以发短信了",
		"地址改成上海市浦东新区世纪大道100号，谢谢",
		"我的手机号是13800001111，订单号A1001",
		"6月1日到6月5日之间送货，早上9点前不要打电话",
		"Please don't text me. Call me at +1 415 555 0100 instead.",
		"Actually, SMS is fine now, but no calls before 9am.",
		"My address is now 48 Pine Avenue, Shelbyville. Deliver between 1 and 5 June.",
		"I'm away from June 10 to June 14, so don't deliver then.",
		"Please remember that I'm allergic to nuts. I prefer email.",
		"my name is \x00\u2028 Li\tLei\n",
		"order #" + strings.Repeat("9", 40),
		"between 99 and 0 June 0000; 25:61pm 十十十点",
		"\xff\xfe 不要 短信",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		current := []Constraint{{Kind: KindProhibition, Key: "sms", Status: Active}, {Kind: KindPreference, Key: "channel", Value: "sms", Status: Active}}
		cs, err := RuleBased(nil).Extract(context.Background(), 7, text, current)
		if err != nil {
			t.Fatalf("RuleBased failed: %v", err)
		}
		var card Card
		if err := card.Apply(current...); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if err := c.Validate(); err != nil {
				t.Errorf("invalid constraint %+v: %v", c, err)
			}
			if c.Status == Superseded || c.Turn != 7 || c.Source != SourceRule {
				t.Errorf("constraint %+v", c)
			}
			if c.Kind == KindTimeRange {
				if _, ok := parseWindow(c.Value); !ok {
					t.Errorf("time range %q does not parse", c.Value)
				}
			}
		}
		if err := card.Apply(cs...); err != nil {
			t.Errorf("Apply: %v", err)
		}
		if text := card.Text(); !utf8.ValidString(text) {
			t.Errorf("card text is not UTF-8: %q", text)
		}
	})
}

// TestRuleBasedReadsItsLexicon runs one utterance per language through
// extractors of each shipped lexicon: each finds only its own language.
func TestRuleBasedReadsItsLexicon(t *testing.T) {
	for _, tc := range []struct {
		lexicon string
		ex      Extractor
		text    string
		want    string // kind/key of the one constraint, or ""
	}{
		{"English", RuleBased(lexicon.English()), "Please don't text me.", "prohibition/sms"},
		{"English", RuleBased(lexicon.English()), "不要发短信", ""},
		{"Chinese", RuleBased(lexicon.Chinese()), "Please don't text me.", ""},
		{"Chinese", RuleBased(lexicon.Chinese()), "不要发短信", "prohibition/sms"},
		{"Chinese", RuleBased(lexicon.Chinese()), "6月1日到6月5日之间送货", "time_range/delivery"},
		{"English", RuleBased(lexicon.English()), "Deliver between 1 and 5 June please", "time_range/delivery"},
		{"Default", RuleBased(nil), "不要发短信", "prohibition/sms"},
	} {
		t.Run(tc.lexicon+"/"+tc.text, func(t *testing.T) {
			cs, err := tc.ex.Extract(context.Background(), 0, tc.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, string(c.Kind)+"/"+c.Key)
			}
			if want := []string{tc.want}; tc.want == "" && len(got) > 0 || tc.want != "" && !slices.Equal(got, want) {
				t.Errorf("extracted %v, want %q", got, tc.want)
			}
		})
	}
}
