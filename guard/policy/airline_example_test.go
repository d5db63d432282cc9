package policy_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// Domain policies as code: rules from the airline agent policy that
// τ-bench's airline agents ran under (../shared/corpus/policies/
// airline_tau_bench.md), written as guard.NewRule over the trace so far.
// Each rule judges a proposed write call against what earlier tool results
// said: the reservation as last seen (a lookup, or the record a previous
// change returned) and the user's profile. The policy itself warns that
// "the API does not check these for the agent": these rules are the check.

// Names of the airline rules.
const (
	ruleBasicEconomy = "airline-basic-economy"
	ruleCancellation = "airline-cancellation"
	rulePayment      = "airline-payment"
	ruleBags         = "airline-checked-bags"
	ruleLookFirst    = "airline-look-first"
)

// airlineNow is the policy's current time, "2024-05-15 15:00:00 EST"; the
// reservations' created_at are on the same clock, without a zone.
var airlineNow = time.Date(2024, 5, 15, 15, 0, 0, 0, time.UTC)

// airlineRules returns the airline policies as rules, judged at now.
func airlineRules(now time.Time) []guard.Rule {
	return []guard.Rule{
		guard.NewRule("basic-economy-flights", basicEconomyFlights),
		guard.NewRule("cancellation", func(t *trace.Trace, s *trace.Step) []trace.Finding { return cancellation(t, s, now) }),
		guard.NewRule("payment-methods", paymentMethods),
		guard.NewRule("checked-bags", checkedBags),
		guard.NewRule("look-first", lookFirst),
	}
}

// reservationTools return a reservation's record: the lookup, and the
// changes, which answer with the updated reservation.
var reservationTools = []string{"get_reservation_details", "update_reservation_flights", "update_reservation_baggages", "update_reservation_passengers"}

// lastReservation returns the latest earlier step whose result is the
// record of reservation id, or nil.
func lastReservation(t *trace.Trace, id string) *trace.Step {
	var last *trace.Step
	for _, s := range t.ToolSteps(reservationTools...) {
		if s.ArgString("reservation_id") == id && s.ResultString("reservation_id") == id {
			last = s
		}
	}
	return last
}

// lastProfile returns the latest earlier lookup of user's profile, or nil.
func lastProfile(t *trace.Trace, user string) *trace.Step {
	calls := t.FindCalls("get_user_details", "user_id", user)
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].ResultString("membership") != "" {
			return calls[i]
		}
	}
	return nil
}

// resultField returns a top-level field of a step's JSON result.
func resultField(s *trace.Step, key string) any {
	v, _ := s.ResultJSON()
	m, _ := v.(map[string]any)
	return m[key]
}

// flightSet returns "number@date" for each flight of a list of flight objects.
func flightSet(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, f := range list {
		m, _ := f.(map[string]any)
		out = append(out, fmt.Sprintf("%v@%v", m["flight_number"], m["date"]))
	}
	slices.Sort(out)
	return out
}

func airlineFinding(rule string, s *trace.Step, format string, args ...any) []trace.Finding {
	return []trace.Finding{{
		Rule: rule, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
		Message: fmt.Sprintf(format, args...), Evidence: s.Args, Tags: []string{"airline-policy"},
	}}
}

// basicEconomyFlights: "Basic economy flights cannot be modified." A cabin
// change that keeps the flights is allowed, so an upgrade first and a
// flight change after it pass; both in one call do not.
func basicEconomyFlights(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || s.Name != "update_reservation_flights" {
		return nil
	}
	id := s.ArgString("reservation_id")
	res := lastReservation(t, id)
	if res == nil || res.ResultString("cabin") != "basic_economy" {
		return nil
	}
	was, now := flightSet(resultField(res, "flights")), flightSet(must(s.Arg("flights")))
	if slices.Equal(was, now) {
		return nil
	}
	return airlineFinding(ruleBasicEconomy, s, "reservation %s is basic economy: its flights cannot be changed (%s to %s)",
		id, strings.Join(was, ","), strings.Join(now, ","))
}

func must(v any, _ bool) any { return v }

// cancellation: "All reservations can be cancelled within 24 hours of
// booking, or if the airline cancelled the flight. Otherwise, basic economy
// or economy flights can be cancelled only if travel insurance is bought
// ..., and business flights can always be cancelled." and "The agent can
// only cancel the whole trip that is not flown." The airline cancelled a
// flight when an earlier flight search listed it with status "cancelled"
// on its date.
func cancellation(t *trace.Trace, s *trace.Step, now time.Time) []trace.Finding {
	if s.Kind != trace.KindTool || s.Name != "cancel_reservation" {
		return nil
	}
	id := s.ArgString("reservation_id")
	res := lastReservation(t, id)
	if res == nil {
		return nil // lookFirst reports it
	}
	flights := flightSet(resultField(res, "flights"))
	for _, f := range flights {
		_, date, _ := strings.Cut(f, "@")
		if d, err := time.Parse(time.DateOnly, date); err == nil && d.Before(now.Truncate(24*time.Hour)) {
			return airlineFinding(ruleCancellation, s, "reservation %s has a flight already flown (%s): only a human agent can help", id, f)
		}
	}
	created, err := time.Parse("2006-01-02T15:04:05", res.ResultString("created_at"))
	age := now.Sub(created)
	switch {
	case err == nil && age >= 0 && age <= 24*time.Hour:
	case res.ResultString("cabin") == "business":
	case res.ResultString("insurance") == "yes":
	case slices.ContainsFunc(flights, func(f string) bool { return airlineCancelled(t, f) }):
	default:
		return airlineFinding(ruleCancellation, s, "reservation %s was booked %.1f days ago, in %s, without insurance, and the airline cancelled none of its flights: it cannot be cancelled",
			id, age.Hours()/24, res.ResultString("cabin"))
	}
	return nil
}

// airlineCancelled reports whether an earlier flight search listed flight
// ("number@date") as cancelled.
func airlineCancelled(t *trace.Trace, flight string) bool {
	number, date, _ := strings.Cut(flight, "@")
	for _, s := range t.ToolSteps("search_direct_flight", "search_onestop_flight") {
		if s.ArgString("date") != date {
			continue
		}
		v, _ := s.ResultJSON()
		found := false
		var visit func(any)
		visit = func(x any) {
			switch o := x.(type) {
			case []any:
				for _, e := range o {
					visit(e)
				}
			case map[string]any:
				found = found || (o["flight_number"] == number && o["status"] == "cancelled")
			}
		}
		visit(v)
		if found {
			return true
		}
	}
	return false
}

// paymentMethods: "All payment methods must already be in user profile",
// "each reservation can use at most one travel certificate, at most one
// credit card, and at most three gift cards", and a flight change is paid
// with "one gift card or credit card".
func paymentMethods(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	var user string
	var ids []string
	switch s.Name {
	case "book_reservation":
		user = s.ArgString("user_id")
		list, _ := must(s.Arg("payment_methods")).([]any)
		for _, p := range list {
			m, _ := p.(map[string]any)
			ids = append(ids, fmt.Sprint(m["payment_id"]))
		}
	case "update_reservation_flights", "update_reservation_baggages":
		res := lastReservation(t, s.ArgString("reservation_id"))
		if res == nil {
			return nil
		}
		user, ids = res.ResultString("user_id"), []string{s.ArgString("payment_id")}
	default:
		return nil
	}
	profile := lastProfile(t, user)
	if profile == nil {
		return nil // lookFirst reports it
	}
	methods, _ := resultField(profile, "payment_methods").(map[string]any)
	count := map[string]int{}
	for _, id := range ids {
		m, ok := methods[id].(map[string]any)
		if !ok {
			return airlineFinding(rulePayment, s, "payment method %q is not in %s's profile", id, user)
		}
		count[fmt.Sprint(m["source"])]++
	}
	switch {
	case count["certificate"] > 1 || count["credit_card"] > 1 || count["gift_card"] > 3:
		return airlineFinding(rulePayment, s, "a reservation takes at most one certificate, one credit card and three gift cards, not %v", count)
	case s.Name == "update_reservation_flights" && count["certificate"] > 0:
		return airlineFinding(rulePayment, s, "a flight change is paid with a gift card or a credit card, not a certificate")
	}
	return nil
}

// freeBags is the checked-bag allowance per passenger, by membership and cabin.
var freeBags = map[string]map[string]int{
	"regular": {"basic_economy": 0, "economy": 1, "business": 2},
	"silver":  {"basic_economy": 1, "economy": 2, "business": 3},
	"gold":    {"basic_economy": 2, "economy": 3, "business": 3},
}

// checkedBags: the free checked-bag allowance ("If the booking user is a
// regular member, 0 free checked bag for each basic economy passenger, ...")
// decides nonfree_baggages, and "the user can add but not remove checked
// bags".
func checkedBags(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	var user, cabin string
	var passengers, was int
	switch s.Name {
	case "book_reservation":
		user, cabin = s.ArgString("user_id"), s.ArgString("cabin")
		list, _ := must(s.Arg("passengers")).([]any)
		passengers = len(list)
	case "update_reservation_baggages":
		res := lastReservation(t, s.ArgString("reservation_id"))
		if res == nil {
			return nil
		}
		user, cabin = res.ResultString("user_id"), res.ResultString("cabin")
		list, _ := resultField(res, "passengers").([]any)
		passengers = len(list)
		fmt.Sscan(res.ResultString("total_baggages"), &was)
	default:
		return nil
	}
	profile := lastProfile(t, user)
	if profile == nil {
		return nil // lookFirst reports it
	}
	membership := profile.ResultString("membership")
	free, ok := freeBags[membership][cabin]
	var total, nonfree int
	_, err1 := fmt.Sscan(s.ArgString("total_baggages"), &total)
	_, err2 := fmt.Sscan(s.ArgString("nonfree_baggages"), &nonfree)
	if !ok || err1 != nil || err2 != nil {
		return nil
	}
	if total < was {
		return airlineFinding(ruleBags, s, "checked bags can be added, not removed (%d to %d)", was, total)
	}
	if want := max(0, total-free*passengers); nonfree != want {
		return airlineFinding(ruleBags, s, "nonfree_baggages is %d, want %d: %d bags, and %d %s passenger(s) of a %s member get %d free each",
			nonfree, want, total, passengers, cabin, membership, free)
	}
	return nil
}

// lookFirst: "The agent must first obtain the user id and the reservation
// id", and the rules above need what the reservation and the profile say:
// a change or cancellation needs an earlier lookup of that reservation, a
// booking one of the user's profile.
func lookFirst(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	switch s.Name {
	case "cancel_reservation", "update_reservation_flights", "update_reservation_baggages", "update_reservation_passengers":
		if id := s.ArgString("reservation_id"); lastReservation(t, id) == nil {
			return airlineFinding(ruleLookFirst, s, "reservation %s was not looked up before %s", id, s.Name)
		}
	case "book_reservation":
		if user := s.ArgString("user_id"); lastProfile(t, user) == nil {
			return airlineFinding(ruleLookFirst, s, "%s's profile was not looked up before booking", user)
		}
	}
	return nil
}

// airlineGuard runs only the airline rules, so that their findings can be
// told apart from the built-in ones.
func airlineGuard() *guard.Guard {
	return guard.New(guard.Config{Rules: airlineRules(airlineNow), Disable: []string{
		rules.AllowList, rules.Arguments, rules.Loop, rules.MaxSteps, rules.Intent, rules.EmptyResult,
		rules.Similarity, rules.Grounding, rules.Invariant, rules.Provenance, rules.Confirmation,
	}})
}

func Example_domainPolicies() {
	profile := `{"membership":"silver","payment_methods":{"credit_card_1":{"source":"credit_card","id":"credit_card_1"},"certificate_9":{"source":"certificate","id":"certificate_9"}}}`
	reservation := `{"reservation_id":"R1","user_id":"ana_1","cabin":"basic_economy","flights":[{"flight_number":"HAT001","date":"2024-05-20"}],` +
		`"passengers":[{"first_name":"Ana"}],"created_at":"2024-05-01T10:00:00","total_baggages":0,"insurance":"no"}`
	tr := &trace.Trace{ID: "airline", Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "get_user_details", Args: `{"user_id":"ana_1"}`, Result: profile},
		{Index: 1, Kind: trace.KindTool, Name: "get_reservation_details", Args: `{"reservation_id":"R1"}`, Result: reservation},
		{Index: 2, Kind: trace.KindTool, Name: "update_reservation_flights", Args: `{"reservation_id":"R1","cabin":"basic_economy","flights":[{"flight_number":"HAT002","date":"2024-05-21"}],"payment_id":"certificate_9"}`},
		{Index: 3, Kind: trace.KindTool, Name: "cancel_reservation", Args: `{"reservation_id":"R1"}`},
		{Index: 4, Kind: trace.KindTool, Name: "book_reservation", Args: `{"user_id":"ana_1","cabin":"economy","passengers":[{"first_name":"Ana"}],"payment_methods":[{"payment_id":"credit_card_1","amount":100}],"total_baggages":3,"nonfree_baggages":0}`},
	}}
	for _, f := range airlineGuard().Evaluate(tr).Findings {
		fmt.Printf("step %d %s: %s\n", f.Step, f.Rule, f.Message)
	}
	// Output:
	// step 2 airline-basic-economy: reservation R1 is basic economy: its flights cannot be changed (HAT001@2024-05-20 to HAT002@2024-05-21)
	// step 2 airline-payment: a flight change is paid with a gift card or a credit card, not a certificate
	// step 3 airline-cancellation: reservation R1 was booked 14.2 days ago, in basic_economy, without insurance, and the airline cancelled none of its flights: it cannot be cancelled
	// step 4 airline-checked-bags: nonfree_baggages is 0, want 1: 3 bags, and 1 economy passenger(s) of a silver member get 2 free each
}

// TestAirlinePoliciesFixture runs the airline rules over hand-made traces
// in the corpus format (testdata/corpus/airline.jsonl), which need no corpus.
func TestAirlinePoliciesFixture(t *testing.T) {
	want := map[string][]string{ // trace id -> "corpus step rule" findings
		"fixture-clean-booking":            nil,
		"fixture-upgrade-then-change":      nil,
		"fixture-basic-economy-change":     {"2 " + ruleBasicEconomy},
		"fixture-late-cancellation":        {"1 " + ruleCancellation},
		"fixture-cancel-airline-cancelled": nil,
		"fixture-cancel-within-24h":        nil,
		"fixture-cancel-flown":             {"1 " + ruleCancellation},
		"fixture-bags-and-payment":         {"1 " + rulePayment, "1 " + ruleBags},
		"fixture-remove-bags":              {"2 " + ruleBags},
		"fixture-no-lookup":                {"0 " + ruleLookFirst, "1 " + ruleLookFirst},
	}
	runs := testkit.LoadFile(t, filepath.Join("testdata", "corpus", "airline.jsonl"))
	if len(runs) != len(want) {
		t.Errorf("%d fixture traces, want %d", len(runs), len(want))
	}
	g := airlineGuard()
	for _, r := range runs {
		t.Run(r.Line.TraceID, func(t *testing.T) {
			corpusStep := map[int]int{}
			for i, s := range r.Step {
				corpusStep[s] = i
			}
			var got []string
			for _, f := range g.Evaluate(r.Trace).Findings {
				got = append(got, fmt.Sprintf("%d %s", corpusStep[f.Step], f.Rule))
				t.Logf("step %d: %s: %s", corpusStep[f.Step], f.Rule, f.Message)
			}
			w, ok := want[r.Line.TraceID]
			if !ok {
				t.Fatalf("no expectation for %s", r.Line.TraceID)
			}
			if !slices.Equal(got, w) {
				t.Errorf("findings %q, want %q", got, w)
			}
		})
	}
}

// TestAirlinePoliciesCorpus runs the airline rules over the τ-bench airline
// runs and reports how often each fires on failed and on successful runs,
// and on the writes that no expected action equals.
func TestAirlinePoliciesCorpus(t *testing.T) {
	runs := testkit.LoadCorpus(t, "taubench_airline.jsonl")
	g := airlineGuard()
	type tally struct{ failed, success, caught, onWrites, onUnexpected int }
	byRule := map[string]*tally{}
	var anyRule tally
	var failed, success, unexpected int
	for _, r := range runs {
		bad := map[int]bool{}
		for _, w := range r.Line.Labels.UnexpectedWrites {
			bad[r.Step[w.Step]] = true
		}
		if len(bad) > 0 {
			unexpected++
		}
		ok := r.Line.Labels.Outcome == "success"
		if ok {
			success++
		} else {
			failed++
		}
		fired, caught := map[string]bool{}, map[string]bool{}
		for _, f := range g.Evaluate(r.Trace).Findings {
			if byRule[f.Rule] == nil {
				byRule[f.Rule] = &tally{}
			}
			c := byRule[f.Rule]
			fired[f.Rule] = true
			c.onWrites++
			if bad[f.Step] {
				c.onUnexpected++
				caught[f.Rule] = true
			}
			if ok {
				t.Logf("  on a successful run: %s step %d: %s: %s", r.Line.TraceID, f.Step, f.Rule, f.Message)
			}
		}
		for rule := range fired {
			if ok {
				byRule[rule].success++
			} else {
				byRule[rule].failed++
			}
			if caught[rule] {
				byRule[rule].caught++
			}
		}
		switch {
		case len(fired) == 0:
		case ok:
			anyRule.success++
		default:
			anyRule.failed++
		}
		if len(caught) > 0 {
			anyRule.caught++
		}
	}
	t.Logf("%d runs: %d failed, %d successful, %d with an unexpected write", len(runs), failed, success, unexpected)
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		c := byRule[rule]
		t.Logf("  %-22s fires on %v failed and %v successful runs; catches %v unexpected-write runs on the write; %v of its findings are on unexpected writes",
			rule, testkit.Ratio{N: c.failed, Of: failed}, testkit.Ratio{N: c.success, Of: success}, testkit.Ratio{N: c.caught, Of: unexpected}, testkit.Ratio{N: c.onUnexpected, Of: c.onWrites})
	}
	flaggedFailed, flaggedSuccess := testkit.Ratio{N: anyRule.failed, Of: failed}, testkit.Ratio{N: anyRule.success, Of: success}
	t.Logf("  any airline rule         fires on %v failed and %v successful runs; catches %v unexpected-write runs on the write",
		flaggedFailed, flaggedSuccess, testkit.Ratio{N: anyRule.caught, Of: unexpected})
	// The rules encode the policy, and a run that breaks it fails; a
	// successful run can break it only where the benchmark does not look.
	// Measured: see the log; the rules fire on failed runs far more often.
	if flaggedFailed.N == 0 {
		t.Errorf("the airline rules fire on no failed run")
	}
	if flaggedSuccess.Value() >= flaggedFailed.Value() {
		t.Errorf("the airline rules fire on successful runs (%v) as often as on failed ones (%v)", flaggedSuccess, flaggedFailed)
	}
}
