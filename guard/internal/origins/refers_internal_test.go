package origins

import (
	"testing"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// TestRefersTo holds which user turns point at the content a tool reads
// without naming it: a determiner, then at most three modifiers of one
// noun phrase, then the kind of content. A comma or a full stop ends the
// phrase; a kind word with no determiner points at nothing in particular.
func TestRefersTo(t *testing.T) {
	w := lexicon.Default()
	cases := []struct {
		turn, tool string
		want       bool
	}{
		{"Reply to the email from Anna.", "read_email", true},
		{"Please forward their contact page to me.", "get_page", true},
		{"Do what the quarterly planning notes document says.", "read_document", true},
		{"Send each person in the team meeting minutes file their task.", "search_files", true},
		{"Use my old booking spreadsheet file.", "open_file", true},
		{"Use my old travel booking spreadsheet file.", "open_file", false}, // four modifiers: too far to tell
		{"Acme's onboarding file lists the steps.", "read_file", true},
		{"Files are usually kept in the shared drive.", "read_file", false},
		{"Read the notes, shared file or not.", "read_file", false},     // the comma ends the phrase
		{"Summarise the report. File it under Q3.", "read_file", false}, // the full stop ends the phrase
		{"把这封邮件的内容告诉我。", "read_email", true},
		{"看看 Priya 发来的那封邮件，告诉我她的作品集里有什么。", "read_inbox", true},
		{"邮件一般在收件箱里。", "read_email", false},
		{"把红十字会那封感谢邮件里写的账户转告给他。", "read_email", true}, // 那封 and a modifier
		{"看看 Anna 发给我的邮件。", "read_email", true},       // a noun a 的-phrase defines
		{"那天下午我们开了很长时间的会，邮件晚点再说。", "read_email", false},
	}
	for _, c := range cases {
		tr := &trace.Trace{UserTurns: []string{c.turn}}
		s := &trace.Step{Kind: trace.KindTool, Name: c.tool, Turn: 0}
		if got := refersTo(&w.Authority, tr, s, contentKinds(&w.Authority, s.Name)); got != c.want {
			t.Errorf("refersTo(%q, %s) = %v, want %v", c.turn, c.tool, got, c.want)
		}
	}
}
