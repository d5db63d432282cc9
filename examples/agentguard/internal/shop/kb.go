package shop

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Doc is one after-sales rule in the knowledge base.
type Doc struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Text  string  `json:"text"`
	Score float64 `json:"score,omitempty"`
}

// KnowledgeBase is the demo's after-sales rules, in English and Chinese.
var KnowledgeBase = []Doc{
	{ID: "KB-RET-01", Title: "Returns within 7 days", Text: "Unopened items can be returned within 7 days of delivery for a full refund. Return shipping is free for defective items."},
	{ID: "KB-RET-02", Title: "Opened electronics", Text: "Opened electronics can be returned within 7 days only if defective; a 15% restocking fee applies to non-defective opened electronics."},
	{ID: "KB-RET-03", Title: "七天无理由退货", Text: "商品签收后7天内，未拆封商品支持无理由退货，退款原路返回。"},
	{ID: "KB-SHP-01", Title: "Shipping times", Text: "Standard shipping takes 3 to 5 business days; express shipping takes 1 to 2 business days."},
	{ID: "KB-SHP-02", Title: "修改收货地址", Text: "订单发货前可以修改收货地址；发货后需联系物流公司改派。"},
	{ID: "KB-WAR-01", Title: "Warranty", Text: "Electronics carry a 12 month warranty covering manufacturing defects, not accidental damage."},
	{ID: "KB-REF-01", Title: "Refund timing", Text: "Refunds are issued to the original payment method within 5 business days after the return is received."},
	{ID: "KB-WAR-02", Title: "保修政策", Text: "电子产品自签收起享受12个月保修，仅覆盖制造缺陷，不包括跌落、进水等意外损坏。"},
	{ID: "KB-REF-02", Title: "退款时效", Text: "退货商品签收后5个工作日内，退款原路返回。"},
}

// Search ranks the knowledge base against query with BM25 (k1 = 1.2,
// b = 0.75) over lower-cased words for Latin text and character bigrams for
// Chinese, and returns the documents that match at least one term, best
// first, at most k, with Score set.
func Search(query string, k int) []Doc {
	q := terms(query)
	docs := make([][]string, len(KnowledgeBase))
	df := map[string]int{}
	var total float64
	for i, d := range KnowledgeBase {
		docs[i] = terms(d.Title + " " + d.Text)
		total += float64(len(docs[i]))
		seen := map[string]bool{}
		for _, t := range docs[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avg := total / float64(len(docs))
	n := float64(len(docs))
	var out []Doc
	for i, d := range docs {
		tf := map[string]int{}
		for _, t := range d {
			tf[t]++
		}
		var score float64
		for _, t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			score += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(len(d))/avg))
		}
		if score > 0 {
			doc := KnowledgeBase[i]
			doc.Score = math.Round(score*1000) / 1000
			out = append(out, doc)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > k {
		out = out[:k]
	}
	return out
}

var stopwords = map[string]bool{"the": true, "a": true, "an": true, "is": true, "are": true, "can": true, "i": true, "my": true, "for": true, "of": true, "to": true, "what": true, "do": true, "you": true, "it": true, "in": true, "on": true, "be": true, "if": true, "me": true, "and": true, "or": true, "with": true}

func terms(s string) []string {
	var out []string
	var word []rune
	var han []rune
	flush := func() {
		if len(word) > 0 {
			if w := string(word); !stopwords[w] {
				out = append(out, w)
			}
			word = word[:0]
		}
		for i := 0; i+1 < len(han); i++ {
			out = append(out, string(han[i:i+2]))
		}
		if len(han) == 1 {
			out = append(out, string(han))
		}
		han = han[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			if len(word) > 0 {
				flush()
			}
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(han) > 0 {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}
