// Package healthtest runs golden cases as Go tests: each case of a golden
// set is a subtest, replayed through your agent under the guard and
// failed with the hits that got through, the same screens and checks the
// health check scores (package guard/health). "go test -run
// TestGolden/B04" reruns one case; "go test -update" rewrites the
// baselines from the runs for a person to review.
//
//	var update = flag.Bool("update", false, "rewrite the golden baselines")
//
//	func TestGolden(t *testing.T) {
//		healthtest.Run(t, "testdata/golden.jsonl", newAgent, healthtest.Options{})
//	}
//
// The golden set's format is package guard/replay's; a case needs only an
// id, its turns and, to check anything of the answer, an answer:
//
//	{"id":"q1","turns":["Where is my order A1001?"],"answer":{"must":["shipped"]}}
package healthtest
