package gates

import (
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// The default invariants read a call only when one of its names is an
// amount's or a date's (the lexicon's Keys), and then judge it.
func TestInvariantsReadNamedValues(t *testing.T) {
	rule := NewInvariants(detect.Default(), nil, nil, true)
	for _, tc := range []struct {
		args string
		want bool // a finding
	}{
		{`{"order_id":"A1001"}`, false},
		{`{"order_id":"A1001","amount":-5}`, true},
		{`{"note":"amount: -5"}`, false}, // a value, not a name
		{`{"items":[{"sku":"x","Unit_Price":-3}]}`, true},
		{`{"created_at":"yesterday"}`, false}, // a word: the tool's to read
		{`{"day":"today"}`, false},
		{`{"日期":"明天"}`, false},
		{`{"date":"2024-02-30"}`, true}, // digits, as a date is written, and no calendar date
		{`{"deadline":"2025-13-01"}`, true},
		{`{"pickupTime":"3pm"}`, false}, // a valid time
		{`{"pickupTime":"25:99"}`, true},
		{`{"timezone":"UTC"}`, false},
		{`{"退款金额":-1}`, true},
		{`{"订单号":"A1"}`, false},
		{`{"am\u006funt":-1}`, true}, // read unescaped
		{`{"amount"`, false},         // not JSON: the argument rule's to report
		{`not json`, false},
	} {
		s := &trace.Step{Kind: trace.KindTool, Name: "pay", Args: tc.args}
		if got := len(rule.Check(&trace.Trace{}, s)) > 0; got != tc.want {
			t.Errorf("%s: a finding is %v, want %v", tc.args, got, tc.want)
		}
	}
}

// A call with no name the defaults read costs no allocation.
func TestInvariantsSkipUnnamedCallsWithoutAllocating(t *testing.T) {
	rule := NewInvariants(detect.Default(), nil, nil, true)
	s := &trace.Step{Kind: trace.KindTool, Name: "query_order", Args: `{"order_id":"A1001","note":"x"}`}
	tr := &trace.Trace{}
	rule.Check(tr, s)
	if n := testing.AllocsPerRun(100, func() { rule.Check(tr, s) }); n != 0 && !raceOn {
		t.Errorf("%v allocations per call, want 0", n)
	}
	if rulekit.KindOfKey(detect.Default(), "order_id")&(rulekit.KeyAmount|rulekit.KeyDate) != 0 {
		t.Error("order_id is read as an amount or a date")
	}
}
