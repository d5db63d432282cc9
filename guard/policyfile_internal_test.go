package guard

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestPolicyDocumented keeps policy.md, the one place the file format is
// documented, complete: every key of every section appears there, in
// backquotes.
func TestPolicyDocumented(t *testing.T) {
	doc, err := os.ReadFile("policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{policyFile{}, policyTool{}, policyResilience{}, policyMemory{}, policyCheck{}, policyAssertions{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			key := jsonKey(typ.Field(i))
			if !strings.Contains(string(doc), "`"+key+"`") {
				t.Errorf("%s key %q is not in policy.md", typ.Name(), key)
			}
		}
	}
}

// TestPolicyChannel checks that a tool's channel in the policy reaches the
// rules, and that a channel no rule knows is refused.
func TestPolicyChannel(t *testing.T) {
	p, err := ReadPolicy("c.yaml", []byte("tools:\n  notify_customer: {channel: sms}\n  ping: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := New(p.Config()).tools.Of("notify_customer").Channel; got != "sms" {
		t.Errorf("notify_customer's channel = %q, want sms", got)
	}
	if _, err := ReadPolicy("c.yaml", []byte("tools:\n  t: {channel: pigeon}\n")); err == nil || !strings.Contains(err.Error(), `c.yaml:2:16: tools.t.channel: "pigeon" is not a channel`) {
		t.Errorf("unknown channel: %v", err)
	}
}
