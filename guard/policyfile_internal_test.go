package guard

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
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

// TestPolicyChannel checks that a tool's channel in the policy is what the
// false-claim rule reads, over what its name suggests.
func TestPolicyChannel(t *testing.T) {
	p, err := ReadPolicy("c.yaml", []byte("tools:\n  notify_customer: {channel: sms}\n  ping: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := FalseClaims(p.Config().Tools).(*falseClaims)
	sms, _ := channelProfile("sms")
	if got := r.profile(&trace.Trace{}, "notify_customer"); got != sms {
		t.Errorf("notify_customer: %b, want the sms channel %b", got.channels, sms.channels)
	}
	if _, err := ReadPolicy("c.yaml", []byte("tools:\n  t: {channel: pigeon}\n")); err == nil || !strings.Contains(err.Error(), `c.yaml:2:16: tools.t.channel: "pigeon" is not a channel`) {
		t.Errorf("unknown channel: %v", err)
	}
}
