package policy

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestPolicyDocumented keeps policy.md, the one place the file format is
// documented, complete: every key of every section appears there, in
// backquotes, as its dotted path below the top level ("gates.loop_limit"
// as `loop_limit` in the gates table).
func TestPolicyDocumented(t *testing.T) {
	doc, err := os.ReadFile("policy.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var visit func(path string, typ reflect.Type)
	visit = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == exprType || seen[typ] {
			return
		}
		seen[typ] = true
		for key, idx := range structFields(typ) {
			if !strings.Contains(string(doc), "`"+key+"`") {
				t.Errorf("key %s is not in policy.md", join(path, key))
			}
			visit(join(path, key), typ.FieldByIndex(idx).Type)
		}
	}
	visit("", reflect.TypeFor[policyFile]())
}

// TestPolicyChannel checks that a tool's channel reaches the guard's
// configuration, and that a channel no rule knows is refused.
func TestPolicyChannel(t *testing.T) {
	p, err := Read("c.yaml", []byte("tools:\n  notify_customer: {channel: SMS}\n  ping: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Config().Tools["notify_customer"].Channel; got != "sms" {
		t.Errorf("notify_customer's channel = %q, want sms", got)
	}
	if _, err := Read("c.yaml", []byte("tools:\n  t: {channel: pigeon}\n")); err == nil || !strings.Contains(err.Error(), `c.yaml:2:16: tools.t.channel: "pigeon" is not a channel`) {
		t.Errorf("unknown channel: %v", err)
	}
}
