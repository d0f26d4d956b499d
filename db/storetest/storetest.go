// Package storetest is the behaviour of engine.Store as a test suite that
// every backend must pass, in the manner of River's riverdrivertest: a
// backend's own tests call Run with a function that opens fresh databases,
// and the suite checks claims under the global limit, compare-and-set
// finals, idempotency, leases and recovery, run listing, artifacts, the
// janitor, events and sessions through the interface alone.
//
// Every time the suite passes is an explicit Unix millisecond value near
// a realistic clock (base), never the wall clock, and nothing in it sleeps:
// concurrent cases wait on their goroutines, not on time.
package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// Harness is one fresh, empty database as a backend hands it to one test of
// the suite.
type Harness struct {
	// Store is a handle on a new, empty database. The backend closes it
	// when the test ends (t.Cleanup).
	Store engine.Store
	// OpenPeer opens another handle on the same database, as a second
	// process sharing it would, and closes it when t ends. The suite's
	// multi-process cases need it; they fail when it is nil.
	OpenPeer func(t *testing.T) engine.Store
}

// Run runs the whole suite, one subtest per behaviour, calling newHarness
// once per subtest (with that subtest's t) for a fresh database.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	groups := []struct {
		name string
		run  func(t *testing.T, nh func(t *testing.T) Harness)
	}{
		{"Runs", testRuns},
		{"Claim", testClaim},
		{"Finals", testFinals},
		{"Idempotency", testIdempotency},
		{"Leases", testLeases},
		{"ListRuns", testListRuns},
		{"Artifacts", testArtifacts},
		{"Janitor", testJanitor},
		{"Events", testEvents},
		{"Sessions", testSessions},
		{"Inputs", testQuestions},
		{"Stream", testStream},
		{"Profiles", testProfiles},
		{"SessionEvents", testSessionEvents},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newHarness) })
	}
}

// base is the suite's clock origin (2026-01-01T00:00:00Z in Unix ms): times
// are base plus small offsets, so a backend that truncated them to 32 bits
// would fail.
const base int64 = 1_767_225_600_000

// chunkSize is the contract's artifact chunk size (at most 256 KiB per
// chunk row); windows around its multiples cross chunk boundaries.
const chunkSize = 256 << 10

// defaultLease is how long mustClaim's leases last.
const defaultLease = 15_000

// peer returns a second handle on h's database.
func peer(t *testing.T, h Harness) engine.Store {
	t.Helper()
	if h.OpenPeer == nil {
		t.Fatal("the harness has no OpenPeer: this case needs a second handle on the same database")
	}
	return h.OpenPeer(t)
}

// queuedRun returns a minimal run to create: template "tpl", retention
// 1000 ms from creation.
func queuedRun(id string, createdAt int64) *engine.Run {
	return &engine.Run{
		RunID: id, TemplateID: "tpl", TemplateVersion: 1, SessionID: "sess_" + id,
		Mode: engine.ModeAsync, CreatedAt: createdAt, UpdatedAt: createdAt,
		ExpiresAt: createdAt + 1000, TTLMs: 1000, TimeoutMs: 5000,
		Inputs: json.RawMessage(`{"x":1}`),
	}
}

// mustCreate creates r without idempotency and returns it as stored.
func mustCreate(t *testing.T, s engine.Store, r *engine.Run) *engine.Run {
	t.Helper()
	got, dedup, err := s.CreateRun(t.Context(), r, nil)
	if err != nil || dedup {
		t.Fatalf("CreateRun(%s) = dedup %v, err %v", r.RunID, dedup, err)
	}
	return got
}

// mustClaim claims exactly one run for owner at now, with a lease until
// now + defaultLease and no global limit in the way.
func mustClaim(t *testing.T, s engine.Store, owner string, now int64) *engine.Run {
	t.Helper()
	runs, err := s.ClaimRuns(t.Context(), engine.Claim{
		OwnerID: owner, Now: now, LeaseUntil: now + defaultLease, MaxRunning: 1000, Max: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("ClaimRuns(%s at %d) = %d runs, %v; want 1", owner, now, len(runs), err)
	}
	return runs[0]
}

// mustGet reads a run that must exist.
func mustGet(t *testing.T, s engine.Store, runID string) *engine.Run {
	t.Helper()
	r, err := s.GetRun(t.Context(), runID)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", runID, err)
	}
	return r
}

// mustFinish finishes a run held by h as succeeded with an empty result.
func mustFinish(t *testing.T, s engine.Store, runID string, h engine.Holder, now, ttl int64) {
	t.Helper()
	if err := s.FinishRun(t.Context(), engine.Finish{RunID: runID, OwnerID: h.OwnerID, Attempt: h.Attempt,
		Status: engine.StatusSucceeded, Result: json.RawMessage(`{}`), Now: now, RunTTLMs: ttl}); err != nil {
		t.Fatalf("FinishRun(%s): %v", runID, err)
	}
}

// holder names the execution that claimed r.
func holder(r *engine.Run) engine.Holder {
	return engine.Holder{OwnerID: r.OwnerID, Attempt: r.Attempt}
}

// events returns all events of a run.
func events(t *testing.T, s engine.Store, runID string) []engine.Event {
	t.Helper()
	evs, err := s.ListEvents(t.Context(), engine.ListEventsParams{RunID: runID})
	if err != nil {
		t.Fatalf("ListEvents(%s): %v", runID, err)
	}
	return evs
}

// eventTypes lists the types of evs in order.
func eventTypes(evs []engine.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// runIDs lists the ids of runs in order.
func runIDs(runs []*engine.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.RunID)
	}
	return out
}

// checkJSON fails unless got and want hold the same JSON value (key order
// and spacing aside: a backend may store JSON in a normalised form).
func checkJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s = %s: not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation %s: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// checkErr fails unless err is (or wraps) want.
func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", what, err, want)
	}
}

// ptr returns a pointer to v.
func ptr(v int64) *int64 { return &v }
