package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// sleepTemplate is a browserless template: it processes `items` items of
// `ms` milliseconds each, checkpointing each, and can fail or write an
// artifact. It records what it ran so tests can assert resumption.
type sleepTemplate struct {
	mu      sync.Mutex
	ran     map[string]int
	running atomic.Int32
	maxSeen atomic.Int32
	stopped chan string // run ids whose ctx ended
}

func newSleep() *sleepTemplate {
	return &sleepTemplate{ran: map[string]int{}, stopped: make(chan string, 100)}
}

func (s *sleepTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "test_sleep", Version: 1, Versions: []int{1}, Title: "sleep", Description: "test",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"ms":{"type":"integer","minimum":0},"items":{"type":"integer","minimum":1,"maximum":1000},
			"fail":{"type":"boolean"},"partial":{"type":"boolean"},"artifact":{"type":"string"},"mime":{"type":"string"}}}`),
		TrustLevel: "any", Resumable: true, Examples: []json.RawMessage{json.RawMessage(`{"ms":1}`)},
	}
}

func (s *sleepTemplate) Check(json.RawMessage, engine.Profile) error { return nil }

func (s *sleepTemplate) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.maxSeen.Load()
		if n <= m || s.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	var in struct {
		Ms       int    `json:"ms"`
		Items    int    `json:"items"`
		Fail     bool   `json:"fail"`
		Partial  bool   `json:"partial"`
		Artifact string `json:"artifact"`
		Mime     string `json:"mime"`
	}
	if err := json.Unmarshal(env.Inputs(), &in); err != nil {
		return nil, err
	}
	if in.Items == 0 {
		in.Items = 1
	}
	done := env.FinishedItems()
	for i := 0; i < in.Items; i++ {
		key := fmt.Sprintf("item-%d", i)
		if _, ok := done[key]; ok {
			continue
		}
		select {
		case <-ctx.Done():
			s.stopped <- env.RunID()
			return nil, ctx.Err()
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		}
		s.mu.Lock()
		s.ran[env.RunID()+"/"+key]++
		s.mu.Unlock()
		if err := env.Checkpoint(ctx, engine.Item{Index: i, Key: key, Status: engine.ItemSucceeded, Output: json.RawMessage(`{}`)},
			engine.Progress{DoneSteps: i + 1, TotalSteps: in.Items}); err != nil {
			return nil, err
		}
	}
	if in.Fail {
		return nil, engine.Errorf(engine.StepExecutionFailed, "asked to fail").WithDetails(map[string]any{"stepIndex": 0})
	}
	res := map[string]any{"items": in.Items}
	if in.Artifact != "" {
		id, err := env.PutArtifact(ctx, "out", in.Mime, []byte(in.Artifact))
		if err != nil {
			return nil, err
		}
		res["artifactId"] = id
	}
	return &engine.Outcome{Result: res, Partial: in.Partial}, nil
}

// harness is one engine on a fresh database running the sleep template.
// Tests driven by time (leases, TTLs, timeouts, polls) build it inside a
// testing/synctest bubble (synctest.Test): the engine, SQLite (pure Go, no
// network) and the template then run on the bubble's fake clock, so a
// 1.5 s TTL costs no wall time, and "wait until X" is exact instead of a
// guessed sleep that a loaded machine outlasts. Tests on real time or
// real sockets stay outside.
type harness struct {
	t      *testing.T
	store  *db.DB
	eng    *engine.Engine
	tpl    *sleepTemplate
	cancel context.CancelFunc
	done   chan struct{}
}

func newHarness(t *testing.T, cfg engine.Config, path string) *harness {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "bt.db")
	}
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	tpl := newSleep()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 50 * time.Millisecond
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 100 * time.Millisecond
	}
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{tpl}, Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, store: store, eng: eng, tpl: tpl, cancel: cancel, done: make(chan struct{})}
	go func() { _ = eng.Run(ctx); close(h.done) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	<-h.done
	h.cancel = nil
	h.store.Close()
}

func (h *harness) submit(inputs string, opts ...func(*engine.SubmitRequest)) *engine.Run {
	h.t.Helper()
	r := engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync}
	for _, o := range opts {
		o(&r)
	}
	res, err := h.eng.Submit(context.Background(), r)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.Run
}

func (h *harness) wait(id string) *engine.Run {
	h.t.Helper()
	ctx, cancel := fixture.Context(h.t)
	defer cancel()
	r, err := h.eng.Wait(ctx, id, nil)
	if err != nil {
		h.t.Fatalf("wait %s: %v", id, err)
	}
	return r
}

func TestRunLifecycleAndInvariants(t *testing.T) { synctest.Test(t, testRunLifecycleAndInvariants) }

func testRunLifecycleAndInvariants(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	r := h.submit(`{"ms":20,"items":3}`)
	if r.Status != engine.StatusQueued || r.Result != nil || r.Error != nil || !r.OwnsSession || !strings.HasPrefix(r.SessionID, "sess_") {
		t.Fatalf("fresh run: %+v", r)
	}
	got := h.wait(r.RunID)
	if got.Status != engine.StatusSucceeded || got.Error != nil || string(got.Result) != `{"items":3}` {
		t.Fatalf("terminal run: status=%s result=%s err=%v", got.Status, got.Result, got.Error)
	}
	if got.Progress.DoneSteps != 3 || got.Progress.TotalSteps != 3 || got.Metrics.ElapsedMs < 40 || got.StartedAt == nil || got.FinishedAt == nil {
		t.Fatalf("progress/metrics: %+v %+v", got.Progress, got.Metrics)
	}
	if got.UpdatedAt < got.CreatedAt || got.ExpiresAt < *got.FinishedAt {
		t.Fatalf("timestamps: %+v", got)
	}
	failed := h.wait(h.submit(`{"ms":1,"fail":true}`).RunID)
	if failed.Status != engine.StatusFailed || failed.Error == nil || failed.Error.Code != engine.StepExecutionFailed || failed.Error.Recovery == "" || failed.Result != nil {
		t.Fatalf("failed run: %+v", failed)
	}
	partial := h.wait(h.submit(`{"ms":1,"partial":true}`).RunID)
	if partial.Status != engine.StatusPartialSuccess || partial.Error != nil || partial.Result == nil {
		t.Fatalf("partial run: %+v", partial)
	}
}

func TestSubmitValidation(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	cases := []struct {
		req  engine.SubmitRequest
		code engine.ErrorCode
		want string
	}{
		{engine.SubmitRequest{TemplateID: "nope"}, engine.TemplateNotFound, "nope"},
		{engine.SubmitRequest{TemplateID: "test_sleep@7"}, engine.TemplateVersionUnsupported, "version 7"},
		{engine.SubmitRequest{TemplateID: "test_sleep@x"}, engine.InvalidParameter, "templateId"},
		{engine.SubmitRequest{TemplateID: "test_sleep", Mode: "fast"}, engine.InvalidParameter, "options.mode"},
		{engine.SubmitRequest{TemplateID: "test_sleep", TimeoutMs: 600001}, engine.InvalidParameter, "options.timeoutMs"},
		{engine.SubmitRequest{TemplateID: "test_sleep", Mode: engine.ModeSync, TimeoutMs: 400000}, engine.InvalidParameter, "syncTimeoutMs"},
		{engine.SubmitRequest{TemplateID: "test_sleep", IdempotencyKey: strings.Repeat("k", 201)}, engine.InvalidParameter, "idempotencyKey"},
		{engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"typo":1}`)}, engine.InvalidParameter, "typo"},
		{engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"items":0}`)}, engine.InvalidParameter, "inputs.items"},
		{engine.SubmitRequest{TemplateID: "test_sleep", SessionID: "sess_nope"}, engine.SessionNotFound, "sess_nope"},
	}
	for _, c := range cases {
		_, err := h.eng.Submit(context.Background(), c.req)
		e := engine.AsError(err)
		if e == nil || e.Code != c.code || !strings.Contains(e.Message, c.want) || e.Recovery == "" {
			t.Errorf("%+v: got %v, want %s mentioning %q", c.req, err, c.code, c.want)
		}
	}
	if _, err := h.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_sleep@1", Inputs: json.RawMessage(`{"ms":1}`)}); err != nil {
		t.Errorf("@1 rejected: %v", err)
	}
	for _, id := range []string{"run_nope", ""} {
		if _, err := h.eng.Get(context.Background(), id); engine.CodeOf(err) != engine.RunNotFound {
			t.Errorf("get %q: %v", id, err)
		}
	}
}

func TestConcurrencyLimitHolds(t *testing.T) { synctest.Test(t, testConcurrencyLimitHolds) }

func testConcurrencyLimitHolds(t *testing.T) {
	h := newHarness(t, engine.Config{MaxConcurrentRuns: 2}, "")
	var ids []string
	for i := 0; i < 8; i++ {
		ids = append(ids, h.submit(`{"ms":100,"items":2}`).RunID)
	}
	queued := 0
	for i := 0; i < 40; i++ {
		l, err := h.eng.List(context.Background(), engine.ListQuery{Status: "running"})
		if err != nil {
			t.Fatal(err)
		}
		if l.Total > 2 {
			t.Fatalf("%d runs running, limit 2", l.Total)
		}
		q, _ := h.eng.List(context.Background(), engine.ListQuery{Status: "queued"})
		queued = max(queued, q.Total)
		time.Sleep(20 * time.Millisecond)
	}
	if queued < 4 {
		t.Errorf("expected several runs to report queued, saw at most %d", queued)
	}
	for _, id := range ids {
		if r := h.wait(id); r.Status != engine.StatusSucceeded {
			t.Errorf("%s ended %s", id, r.Status)
		}
	}
	if m := h.tpl.maxSeen.Load(); m > 2 {
		t.Errorf("template saw %d concurrent runs", m)
	}
}

func TestCancelStopsWorkAndWins(t *testing.T) { synctest.Test(t, testCancelStopsWorkAndWins) }

func testCancelStopsWorkAndWins(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	r := h.submit(`{"ms":60000}`)
	waitStatus(t, h.eng, r.RunID, engine.StatusRunning)
	start := time.Now()
	res, err := h.eng.Cancel(context.Background(), r.RunID, "test")
	if err != nil || !res.Success || res.Status != engine.StatusCanceled {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	// The state is final before the answer.
	got, _ := h.eng.Get(context.Background(), r.RunID)
	if got.Status != engine.StatusCanceled || got.Error == nil || got.Error.Code != engine.RunCanceled {
		t.Fatalf("after cancel: %+v", got)
	}
	select {
	case id := <-h.tpl.stopped:
		if id != r.RunID {
			t.Fatalf("wrong run stopped: %s", id)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("work did not stop within 2 s")
	}
	t.Logf("work stopped %v after cancel", time.Since(start))
	time.Sleep(200 * time.Millisecond) // on the fake clock: heartbeats and polls come and go
	again, _ := h.eng.Get(context.Background(), r.RunID)
	if again.Status != engine.StatusCanceled || again.UpdatedAt != got.UpdatedAt {
		t.Fatalf("a later write changed the run: %+v", again)
	}
	res2, err := h.eng.Cancel(context.Background(), r.RunID, "")
	if err != nil || res2.Success || res2.Status != engine.StatusCanceled || res2.Reason != "run already canceled" {
		t.Fatalf("second cancel: %+v %v", res2, err)
	}
}

func TestTimeout(t *testing.T) { synctest.Test(t, testTimeout) }

func testTimeout(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	r := h.submit(`{"ms":60000}`, func(r *engine.SubmitRequest) { r.TimeoutMs = 300 })
	got := h.wait(r.RunID)
	if got.Status != engine.StatusFailed || got.Error == nil || got.Error.Code != engine.RunTimeout {
		t.Fatalf("timeout run: %+v", got)
	}
}

func TestIdempotentSubmission(t *testing.T) { synctest.Test(t, testIdempotentSubmission) }

func testIdempotentSubmission(t *testing.T) {
	// The window (the run's TTL) is long enough for 100 concurrent submissions
	// on a loaded 2-core CI machine under -race.
	h := newHarness(t, engine.Config{RunTTL: 1500 * time.Millisecond}, "")
	var wg sync.WaitGroup
	ids := make([]string, 100)
	dedups := atomic.Int32{}
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"ms":1}`), IdempotencyKey: "k1"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.Run.RunID
			if res.Deduplicated {
				dedups.Add(1)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("two runs for one key: %s %s", ids[0], id)
		}
	}
	if dedups.Load() != 99 {
		t.Fatalf("deduplicated %d, want 99", dedups.Load())
	}
	fixture.WaitUntil(t, "the key's window (runTtlMs 1500) to pass", func() bool {
		res, err := h.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"ms":1}`), IdempotencyKey: "k1"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Deduplicated {
			if res.Run.RunID == ids[0] {
				t.Fatalf("after the window: a fresh submission returned the old run %s", ids[0])
			}
			return true
		}
		if res.Run.RunID != ids[0] {
			t.Fatalf("deduplicated to %s, want %s", res.Run.RunID, ids[0])
		}
		return false
	})
}

func TestArtifactChunks(t *testing.T) {
	h := newHarness(t, engine.Config{ArtifactMaxChunkSize: 5}, "")
	text := "aé€😀bc"
	r := h.wait(h.submit(fmt.Sprintf(`{"ms":1,"artifact":%q,"mime":"application/json"}`, text)).RunID)
	if len(r.ArtifactIDs) != 1 {
		t.Fatalf("artifacts: %v", r.ArtifactIDs)
	}
	id := r.ArtifactIDs[0]
	var got strings.Builder
	off := int64(0)
	for i := 0; i < 20; i++ {
		c, err := h.eng.ReadArtifact(context.Background(), id, off, 2)
		if err != nil {
			t.Fatal(err)
		}
		if c.Length == 0 && !c.Complete {
			t.Fatalf("empty incomplete chunk at %d", off)
		}
		got.WriteString(c.Data)
		off += c.Length
		if c.Complete != (off == c.TotalSize) {
			t.Fatalf("complete flag wrong at %d", off)
		}
		if c.Complete {
			break
		}
	}
	if got.String() != text {
		t.Fatalf("reassembled %q", got.String())
	}
	if _, err := h.eng.ReadArtifact(context.Background(), id, 2, 2); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("offset inside a character: %v", err)
	}
	size := int64(len(text))
	if c, err := h.eng.ReadArtifact(context.Background(), id, size, 0); err != nil || !c.Complete || c.Length != 0 {
		t.Fatalf("offset == size: %+v %v", c, err)
	}
	if _, err := h.eng.ReadArtifact(context.Background(), id, size+1, 0); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("offset > size: %v", err)
	}
	if _, err := h.eng.ReadArtifact(context.Background(), "art_nope", 0, 0); engine.CodeOf(err) != engine.ArtifactNotFound {
		t.Fatalf("unknown: %v", err)
	}
	bin := h.wait(h.submit(`{"ms":1,"artifact":"\u0000\u0001binary","mime":"image/png"}`).RunID)
	c, err := h.eng.ReadArtifact(context.Background(), bin.ArtifactIDs[0], 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(c.Data)
	if string(raw) != "\x00\x01bin" || c.Length != 5 {
		t.Fatalf("base64 chunk %q len %d (clamped to 5)", raw, c.Length)
	}
}

func TestShutdownRequeuesAndRestartResumes(t *testing.T) {
	synctest.Test(t, testShutdownRequeuesAndRestartResumes)
}

func testShutdownRequeuesAndRestartResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bt.db")
	h := newHarness(t, engine.Config{}, path)
	r := h.submit(`{"ms":100,"items":30}`)
	fixture.WaitUntil(t, "a few items to run before the shutdown", func() bool {
		h.tpl.mu.Lock()
		defer h.tpl.mu.Unlock()
		return len(h.tpl.ran) >= 5
	})
	h.stop()
	h2 := newHarness(t, engine.Config{}, path)
	got := h2.wait(r.RunID)
	if got.Status != engine.StatusSucceeded || got.Progress.DoneSteps != 30 {
		t.Fatalf("resumed run: %s %+v", got.Status, got.Progress)
	}
	firstRan := len(h.tpl.ran)
	if firstRan == 0 || firstRan+len(h2.tpl.ran) != 30 {
		t.Fatalf("items ran %d before and %d after restart, want 30 in all with none twice", firstRan, len(h2.tpl.ran))
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		h := newHarness(t, engine.Config{}, "")
		h.wait(h.submit(`{"ms":1}`).RunID)
		h.stop()
	}()
	// The goroutines wind down in their own time: the wait ends near the
	// test's deadline (fixture.Context), not after a guessed 3 s.
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for runtime.NumGoroutine() > before+2 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestListKeysetPaging(t *testing.T) {
	h := newHarness(t, engine.Config{MaxConcurrentRuns: 1}, "")
	want := map[string]bool{}
	for i := 0; i < 23; i++ {
		want[h.submit(`{"ms":1}`).RunID] = true
	}
	seen := map[string]bool{}
	q := engine.ListQuery{TemplateID: "test_sleep", Limit: 5}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("too many pages")
		}
		l, err := h.eng.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if wantTotal := 23 + min(pages, 2) - min(pages, 1); l.Total != wantTotal {
			t.Fatalf("page %d: total %d, want %d", pages, l.Total, wantTotal)
		}
		// A run created while paging must not shift the pages.
		if pages == 1 {
			h.submit(`{"ms":1}`)
		}
		for i, r := range l.Runs {
			if seen[r.RunID] {
				t.Fatalf("duplicate %s", r.RunID)
			}
			seen[r.RunID] = true
			if i > 0 && (r.CreatedAt > l.Runs[i-1].CreatedAt) {
				t.Fatal("not newest first")
			}
		}
		if len(l.Runs) < 5 {
			break
		}
		last := l.Runs[len(l.Runs)-1]
		q.BeforeCreatedAt, q.BeforeRunID = last.CreatedAt, last.RunID
	}
	if len(seen) != 23 {
		t.Fatalf("saw %d runs, want 23", len(seen))
	}
	for id := range want {
		if !seen[id] {
			t.Fatalf("missed %s", id)
		}
	}
}
