package lexicon_test

import (
	"fmt"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// A custom lexicon: the default vocabulary plus a write verb of the
// caller's tools and how an answer claims it, and a name for an intent.
func Example() {
	lx := lexicon.Default()
	lx.WriteVerbs = append(lx.WriteVerbs, "ship")
	lx.Claims.Channels = append(lx.Claims.Channels, lexicon.ClaimChannel{
		Name: "shipment", Rank: 2, Absent: true, Tool: []string{"ship"},
		Noun: []string{"parcel", "包裹"}, Did: []string{"shipped", "已发货"},
	})
	zh := lx.Replies[lexicon.ZH]
	zh.Names = map[string]string{"track_parcel": "查询包裹"}
	lx.Replies[lexicon.ZH] = zh

	c := lx.Compiled() // compiled once; lx must not change after this
	fmt.Println(c.WriteVerbs["ship"], c.WriteVerbs["track"])
	ship := c.Claims.Channels[len(c.Claims.Channels)-1]
	fmt.Println(ship.Name, ship.Did)

	lang := c.LangOf("我的包裹到哪了？")
	fmt.Println(lang, c.Replies(lang).Names["track_parcel"])
	fmt.Println(c.Replies(c.LangOf("Where is my parcel?")).Clarify)
	// Output:
	// true false
	// shipment [shipped 已发货]
	// zh 查询包裹
	// Could you tell me a little more about what you need?
}

// A new language is a Lexicon of its own merged onto the default: its
// replies, with the script that marks a turn written in it, and any
// vocabulary it adds.
func ExampleMerge() {
	ja := &lexicon.Lexicon{
		Absence: []string{`見つかりません`},
		Replies: map[lexicon.Lang]lexicon.Replies{"ja": {
			Scripts: []string{"Hiragana", "Katakana"},
			Refusal: "申し訳ありませんが、確かな答えが見つかりませんでした。",
		}},
	}
	c := lexicon.Merge(lexicon.Default(), ja).Compiled()
	lang := c.LangOf("注文はどこですか")
	fmt.Println(lang, c.Replies(lang).Refusal)
	fmt.Println(c.Absence.MatchString("注文が見つかりません"))
	// Output:
	// ja 申し訳ありませんが、確かな答えが見つかりませんでした。
	// true
}
