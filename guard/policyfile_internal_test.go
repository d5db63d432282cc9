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
