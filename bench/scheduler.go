package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
)

// timedStore wraps the SQLite store to timestamp, with nanosecond
// precision, when each run's creation, claim and final write committed.
type timedStore struct {
	engine.Store
	mu       sync.Mutex
	created  map[string]time.Time
	claimed  map[string]time.Time
	finishes []time.Time
	claims   []time.Time
}

func (s *timedStore) CreateRun(ctx context.Context, r *engine.Run, idem *engine.IdempotencyClaim) (*engine.Run, bool, error) {
	out, dedup, err := s.Store.CreateRun(ctx, r, idem)
	if err == nil {
		s.mu.Lock()
		s.created[out.RunID] = time.Now()
		s.mu.Unlock()
	}
	return out, dedup, err
}

func (s *timedStore) ClaimRuns(ctx context.Context, c engine.Claim) ([]*engine.Run, error) {
	runs, err := s.Store.ClaimRuns(ctx, c)
	now := time.Now()
	s.mu.Lock()
	for _, r := range runs {
		s.claimed[r.RunID] = now
		s.claims = append(s.claims, now)
	}
	s.mu.Unlock()
	return runs, err
}

func (s *timedStore) FinishRun(ctx context.Context, f engine.Finish) error {
	err := s.Store.FinishRun(ctx, f)
	if err == nil {
		s.mu.Lock()
		s.finishes = append(s.finishes, time.Now())
		s.mu.Unlock()
	}
	return err
}

// schedResult holds scenario 3's figures.
type schedResult struct {
	Runs, Limit     int
	SubmitPerSec    float64
	RunsPerSec      float64
	MaxRunningDB    int
	MaxRunningLocal int
	RefillP50       time.Duration
	RefillP99       time.Duration
	PacedRuns       int
	ClaimP50        time.Duration
	ClaimP99        time.Duration
	DrainTime       time.Duration
	Failed          int
	SamplesDB       int
}

// benchScheduler measures the scheduler with the browserless dev_echo
// template (sleepMs 0, one checkpointed item): (a) o.schedRuns runs queued
// up front, then drained by the engine: runs/s from engine start to the last
// terminal run, the most runs ever running (sampled from the database and
// from the engine), and the slot refill latency (a run's final write → the
// next claim); (b) o.pacedRuns runs submitted one every 5 ms to an idle
// engine: queued → running claim latency p50/p99.
func benchScheduler(ctx context.Context, o *options, log *slog.Logger) (*schedResult, error) {
	dir, err := os.MkdirTemp("", "browsertask-bench-sched-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := db.Open(ctx, filepath.Join(dir, "sched.db"))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	ts := &timedStore{Store: store, created: map[string]time.Time{}, claimed: map[string]time.Time{}}
	cfg := engine.DefaultConfig()
	cfg.MaxConcurrentRuns = o.limit
	eng, err := engine.New(engine.Options{Store: ts, Templates: []engine.Template{devtpl.Echo{}},
		Config: cfg, Logger: log.With("component", "engine")})
	if err != nil {
		return nil, err
	}
	res := &schedResult{Runs: o.schedRuns, Limit: o.limit, PacedRuns: o.pacedRuns}
	in := []byte(`{"sleepMs":0}`)
	t0 := time.Now()
	for i := 0; i < o.schedRuns; i++ {
		if _, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: in, Mode: engine.ModeAsync}); err != nil {
			return nil, err
		}
	}
	res.SubmitPerSec = float64(o.schedRuns) / time.Since(t0).Seconds()

	var maxLocal atomic.Int64
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	sampled := make(chan struct{})
	go func() { // the engine's own view, sampled as often as possible
		defer close(sampled)
		for sctx.Err() == nil {
			if n := int64(len(eng.Running())); n > maxLocal.Load() {
				maxLocal.Store(n)
			}
			time.Sleep(250 * time.Microsecond)
		}
	}()
	rctx, stopEngine := context.WithCancel(ctx)
	engineDone := make(chan struct{})
	start := time.Now()
	go func() { defer close(engineDone); _ = eng.Run(rctx) }()
	defer func() { stopEngine(); <-engineDone }()
	// The database's view: running runs across every process, read through
	// a separate read-only handle with one prepared statement, so sampling
	// costs the engine as little as possible.
	sampler, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "sched.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer sampler.Close()
	count, err := sampler.PrepareContext(ctx, `SELECT COALESCE(SUM(status = 'running'), 0), COALESCE(SUM(status = 'queued'), 0)
		FROM runs WHERE status IN ('queued', 'running')`)
	if err != nil {
		return nil, err
	}
	defer count.Close()
	for {
		var running, queued int
		if err := count.QueryRowContext(ctx).Scan(&running, &queued); err != nil {
			return nil, err
		}
		res.MaxRunningDB = max(res.MaxRunningDB, running)
		res.SamplesDB++
		if queued == 0 && running == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	ts.mu.Lock()
	last := ts.finishes[len(ts.finishes)-1]
	finishes, claims := append([]time.Time(nil), ts.finishes...), append([]time.Time(nil), ts.claims...)
	ts.mu.Unlock()
	res.DrainTime = last.Sub(start)
	res.RunsPerSec = float64(o.schedRuns) / res.DrainTime.Seconds()
	failed, err := eng.List(ctx, engine.ListQuery{Status: "failed", Limit: 1})
	if err != nil {
		return nil, err
	}
	res.Failed = failed.Total
	// The k-th claim after the first `limit` refills the slot freed by the
	// (k-limit)-th final write.
	var refill []time.Duration
	for k := o.limit; k < len(claims) && k-o.limit < len(finishes); k++ {
		refill = append(refill, max(claims[k].Sub(finishes[k-o.limit]), 0))
	}
	res.RefillP50, res.RefillP99 = percentile(refill, 50), percentile(refill, 99)

	// (b) paced submissions: claim latency without a backlog.
	var ids []string
	for i := 0; i < o.pacedRuns; i++ {
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: in, Mode: engine.ModeAsync})
		if err != nil {
			return nil, err
		}
		ids = append(ids, sub.Run.RunID)
		time.Sleep(5 * time.Millisecond)
	}
	for _, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := eng.Wait(wctx, id, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("paced run %s: %w", id, err)
		}
	}
	stopSampling()
	<-sampled
	res.MaxRunningLocal = int(maxLocal.Load())
	ts.mu.Lock()
	var lat []time.Duration
	for _, id := range ids {
		lat = append(lat, ts.claimed[id].Sub(ts.created[id]))
	}
	ts.mu.Unlock()
	res.ClaimP50, res.ClaimP99 = percentile(lat, 50), percentile(lat, 99)
	return res, nil
}
