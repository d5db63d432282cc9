package memory

import (
	"encoding/json"
	"reflect"
	"testing"
)

// cardStepTexts are card step results, in CardStep's shape and not.
var cardStepTexts = []string{
	`[]`,
	`[{"kind":"id","key":"order:a1006","value":"A1006","turn":6,"status":"active","source":"rule"}]`,
	`[{"kind":"prohibition","key":"sms","value":"","turn":0,"status":"revoked","source":"rule","ended":3}]`,
	`[{"kind":"address","key":"address","value":"上海市浦东新区世纪大道100号","turn":2,"status":"active","source":"model"},{"kind":"name","key":"name","value":"李雷","turn":2,"status":"active"}]`,
	` [ {"kind" : "fact", "key":"fact:1","value":"allergic to \"nuts\"\n","turn":-1,"status":"active"} ] `,
	`[{"Kind":"id","key":"order:a1","value":"A1","turn":1,"status":"active"}]`,
	`[{"kind":"id","kind":"name","key":"k","value":"v","turn":1,"status":"active"}]`,
	`[{"kind":"id","key":"k","value":"v","turn":1.0,"status":"active"}]`,
	`[{"kind":"id","key":"k","value":"v","turn":1e2,"status":"active"}]`,
	`[{"kind":"id","key":"k","value":null,"turn":1,"status":"active"}]`,
	`[{"kind":"id","key":"k","value":"\xff","turn":1,"status":"active"}]`,
	`[{"kind":"id","key":"k","value":"v","turn":99999999999999999999,"status":"active"}]`,
	`[{"kind":"id","extra":[1,2],"key":"k","value":"v","turn":1,"status":"active"}]`,
	`[null]`, `null`, `[] []`, `[{}]`, `{}`, ``,
}

func TestReadCardStepReadsAsDecoded(t *testing.T) {
	for _, s := range cardStepTexts {
		checkCardStep(t, s)
	}
	// What CardStep writes, the reader reads.
	step := CardStep(4, []Constraint{{Kind: KindID, Key: "order:a1", Value: "A1", Turn: 4, Status: Active, Source: SourceRule}})
	if _, ok := readCardStep(step.Result); !ok {
		t.Errorf("readCardStep turned away CardStep's own result %s", step.Result)
	}
}

// checkCardStep holds readCardStep to json.Unmarshal wherever it reads s.
func checkCardStep(t *testing.T, s string) {
	t.Helper()
	got, ok := readCardStep(s)
	if !ok {
		return
	}
	var want []Constraint
	if err := json.Unmarshal([]byte(s), &want); err != nil {
		t.Fatalf("readCardStep read %q, which json.Unmarshal rejects: %v", s, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("readCardStep(%q) = %+v; json.Unmarshal: %+v", s, got, want)
	}
}

func FuzzReadCardStep(f *testing.F) {
	for _, s := range cardStepTexts {
		f.Add(s)
	}
	f.Fuzz(checkCardStep)
}

// BenchmarkDecodeCardStep is the decoding of a card step of two
// constraints, against encoding/json ("unmarshal").
func BenchmarkDecodeCardStep(b *testing.B) {
	s := cardStepTexts[3]
	b.Run("reader", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := readCardStep(s); !ok {
				b.Fatal("turned away")
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var cs []Constraint
			if err := json.Unmarshal([]byte(s), &cs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
