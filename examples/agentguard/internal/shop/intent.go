package shop

import (
	"context"
	"sort"

	"github.com/agentguard/agentguard/guard"
)

// Intents are the requests the demo agent serves.
var Intents = []string{"check_order_status", "change_the_address", "return_an_item", "ask_about_policy", "cancel_an_order", "say_hello", "confirm_a_request"}

var intentWords = map[string][]string{
	"check_order_status": {"where", "track", "status", "shipped", "到哪", "物流", "text me", "issue", "有问题"},
	"change_the_address": {"address", "地址", "deliver to"},
	"return_an_item":     {"return", "broken", "refund", "退货", "退", "issue", "有问题"},
	"ask_about_policy":   {"policy", "return policy", "warranty", "compensation", "政策", "保修", "赔偿", "price protection", "price-match", "guarantee", "价保", "发票", "invoice"},
	"cancel_an_order":    {"cancel", "取消"},
	"say_hello":          {"hello", "hi ", "你好", "thanks", "谢谢"},
}

// Classify is the demo's intent classifier: keyword votes, with the share
// of votes as confidence. A message with an order number but no keyword is
// taken as an order-status question; one with neither has no confident
// intent, and the guard's intent gate asks the user what they mean.
func Classify(_ context.Context, text string) (guard.Intent, error) {
	if confirmation.MatchString(text) {
		return guard.Intent{Label: "confirm_a_request", Confidence: 0.95}, nil
	}
	votes := map[string]int{}
	total := 0
	for intent, words := range intentWords {
		for _, w := range words {
			if has(text, w) {
				votes[intent]++
				total++
			}
		}
	}
	if total == 0 {
		if orderID.MatchString(text) {
			return guard.Intent{Label: "check_order_status", Confidence: 0.7}, nil
		}
		return guard.Intent{Label: "unknown", Confidence: 0.2, Alternatives: []string{"check_order_status", "return_an_item"}}, nil
	}
	ranked := make([]string, 0, len(votes))
	for k := range votes {
		ranked = append(ranked, k)
	}
	sort.Slice(ranked, func(i, j int) bool {
		if votes[ranked[i]] != votes[ranked[j]] {
			return votes[ranked[i]] > votes[ranked[j]]
		}
		return ranked[i] < ranked[j]
	})
	conf := float64(votes[ranked[0]]) / float64(total)
	if total == 1 {
		conf = 0.8
	}
	return guard.Intent{Label: ranked[0], Confidence: conf, Alternatives: ranked[1:]}, nil
}
