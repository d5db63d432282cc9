package memory

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentguard/agentguard/trace"
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

func FuzzAppendCardStep(f *testing.F) {
	f.Add("id", "order:a1006", "A1006", 6, "active", "rule", 0, "name", "李雷")
	f.Add("fact", "fact:1", "allergic to \"nuts\"\n\t<b>&</b>\u2028\u2029\x00\x7f\xff", -3, "revoked", "", 9, "", "\\")
	f.Fuzz(func(t *testing.T, kind, key, value string, turn int, status, source string, ended int, kind2, value2 string) {
		cs := []Constraint{
			{Kind: Kind(kind), Key: key, Value: value, Turn: turn, Status: State(status), Source: source, Ended: ended},
			{Kind: Kind(kind2), Value: value2},
		}
		for _, cs := range [][]Constraint{nil, cs[:1], cs} {
			want, err := marshal(nonNil(cs))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendCardStep(nil, cs); string(got) != string(want) {
				t.Fatalf("appendCardStep = %s; encoding/json: %s", got, want)
			}
		}
	})
}

// BenchmarkCardStep is the recording of a card step of two constraints,
// against encoding/json ("marshal").
func BenchmarkCardStep(b *testing.B) {
	cs := []Constraint{
		{Kind: KindID, Key: "order:a1006", Value: "A1006", Turn: 6, Status: Active, Source: SourceRule},
		{Kind: KindName, Key: "name", Value: "李雷", Turn: 6, Status: Active, Source: SourceRule},
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = CardStep(6, cs)
		}
	})
	b.Run("marshal", func(b *testing.B) { // as CardStep did
		b.ReportAllocs()
		for b.Loop() {
			out, err := marshal(nonNil(cs))
			if err != nil {
				b.Fatal(err)
			}
			_ = &trace.Step{Kind: trace.KindMemory, Name: StepCard, Turn: 6, Result: string(out)}
		}
	})
}
