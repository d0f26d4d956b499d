package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/db/postgres"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/jackc/pgx/v5"
)

// pgResult holds scenario 15's figures: PostgreSQL as the shared store.
type pgResult struct {
	// WakeRuns runs were each submitted through an idle engine and claimed
	// by another engine on the same database.
	WakeRuns                 int
	WakePGP50, WakePGP99     time.Duration
	WakeSQLP50, WakeSQLP99   time.Duration
	ThroughputRuns, Limit    int
	PGRunsPerSec             [3]float64 // 1, 2, 3 engines
	SQLiteRunsPerSec         float64
	PGMaxRunning, SQLMaxRuns int
}

// pgStore is a store as the bench opens it: its own handle on the shared
// database.
type pgStore interface {
	engine.Store
	Close() error
}

// benchPostgres measures (a) wake-up latency: a run submitted through one
// engine (not running) is claimed by another, idle, engine on the same
// database — NOTIFY on PostgreSQL, the scheduler's poll (500 ms by default)
// on SQLite; (b) scheduler throughput: o.schedRuns dev_echo runs (sleepMs
// 0) queued up front, drained by 1, 2 and 3 engines, each on its own
// handle, under one global limit o.limit, against one engine on SQLite.
// The engines run in this process (each with its own connections), like
// scenario 3. The PostgreSQL database is BROWSERTASK_TEST_POSTGRES_URL, or
// a throwaway cluster started with scripts/pg.
func benchPostgres(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*pgResult, error) {
	base := os.Getenv("BROWSERTASK_TEST_POSTGRES_URL")
	if base == "" {
		dir, err := os.MkdirTemp("", "browsertask-bench-pg-")
		if err != nil {
			return nil, err
		}
		script := filepath.Join(repoRoot(), "scripts", "pg")
		b, err := exec.CommandContext(ctx, "bash", script, "start", dir).Output()
		if err != nil {
			return nil, fmt.Errorf("scripts/pg start (install Debian's postgresql, or set BROWSERTASK_TEST_POSTGRES_URL): %w", err)
		}
		defer exec.Command("bash", script, "stop", dir).Run() //nolint:errcheck // best effort
		base = strings.TrimSpace(string(b))
		fmt.Fprintf(out, "    throwaway cluster: %s\n", postgres.Redact(base))
	}
	// SQLite's wake-up is its poll (half of 500 ms on average per run), so
	// the wake-up part takes at most 50 runs.
	res := &pgResult{WakeRuns: min(o.pacedRuns, 50), ThroughputRuns: o.schedRuns, Limit: o.limit}
	var err error
	pgOpen := func(u string) func() (pgStore, error) {
		return func() (pgStore, error) { return postgres.Open(ctx, u) }
	}
	// (a) wake-up latency.
	{
		u, drop, err := pgSchema(ctx, base)
		if err != nil {
			return nil, err
		}
		res.WakePGP50, res.WakePGP99, err = wakeLatency(ctx, log, res.WakeRuns, pgOpen(u))
		drop()
		if err != nil {
			return nil, fmt.Errorf("postgres wake-up: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "browsertask-bench-pgsql-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sqliteOpen := func(name string) func() (pgStore, error) {
		return func() (pgStore, error) { return db.Open(ctx, filepath.Join(dir, name)) }
	}
	if res.WakeSQLP50, res.WakeSQLP99, err = wakeLatency(ctx, log, res.WakeRuns, sqliteOpen("wake.db")); err != nil {
		return nil, fmt.Errorf("sqlite wake-up: %w", err)
	}
	fmt.Fprintf(out, "    wake-up: PostgreSQL p50 %v p99 %v; SQLite p50 %v p99 %v\n",
		res.WakePGP50.Round(100*time.Microsecond), res.WakePGP99.Round(100*time.Microsecond),
		res.WakeSQLP50.Round(time.Millisecond), res.WakeSQLP99.Round(time.Millisecond))
	// (b) throughput.
	for n := 1; n <= 3; n++ {
		u, drop, err := pgSchema(ctx, base)
		if err != nil {
			return nil, err
		}
		rps, maxRun, err := drainThroughput(ctx, log, o, n, pgOpen(u))
		drop()
		if err != nil {
			return nil, fmt.Errorf("postgres throughput, %d engines: %w", n, err)
		}
		res.PGRunsPerSec[n-1], res.PGMaxRunning = rps, max(res.PGMaxRunning, maxRun)
		fmt.Fprintf(out, "    throughput: %d engine(s) on PostgreSQL: %.0f runs/s (most running %d)\n", n, rps, maxRun)
	}
	if res.SQLiteRunsPerSec, res.SQLMaxRuns, err = drainThroughput(ctx, log, o, 1, sqliteOpen("drain.db")); err != nil {
		return nil, fmt.Errorf("sqlite throughput: %w", err)
	}
	fmt.Fprintf(out, "    throughput: 1 engine on SQLite: %.0f runs/s (most running %d)\n", res.SQLiteRunsPerSec, res.SQLMaxRuns)
	return res, nil
}

// pgSchema returns base with a fresh schema as its search_path, and a
// function dropping it.
func pgSchema(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return
		}
		defer conn.Close(ctx) //nolint:errcheck // best effort
		_, _ = conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	}
	return u.String(), drop, nil
}

// withWaker keeps a store's PeerWaker visible through the timing wrapper.
func withWaker(s engine.Store, ts *timedStore) engine.Store {
	if w, ok := s.(engine.PeerWaker); ok {
		return struct {
			*timedStore
			engine.PeerWaker
		}{ts, w}
	}
	return ts
}

// benchEngine opens a handle and builds an engine of dev_echo on it.
func benchEngine(log *slog.Logger, open func() (pgStore, error), limit int) (*engine.Engine, *timedStore, func(), error) {
	s, err := open()
	if err != nil {
		return nil, nil, nil, err
	}
	ts := &timedStore{Store: s, created: map[string]time.Time{}, claimed: map[string]time.Time{}}
	cfg := engine.DefaultConfig()
	cfg.MaxConcurrentRuns = limit
	eng, err := engine.New(engine.Options{Store: withWaker(s, ts), Templates: []engine.Template{devtpl.Echo{}},
		Config: cfg, Logger: log.With("component", "engine")})
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	return eng, ts, func() { s.Close() }, nil
}

// runEngine starts eng.Run and returns a function that stops it and waits.
func runEngine(ctx context.Context, eng *engine.Engine) func() {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(rctx) }()
	return func() { cancel(); <-done }
}

// wakeLatency submits runs one at a time through a submitting engine that
// is not running and measures, for each, the commit of its creation to the
// commit of its claim by the other engine, which is idle each time.
func wakeLatency(ctx context.Context, log *slog.Logger, runs int, open func() (pgStore, error)) (time.Duration, time.Duration, error) {
	sub, subTS, closeSub, err := benchEngine(log, open, 4)
	if err != nil {
		return 0, 0, err
	}
	defer closeSub()
	worker, workTS, closeWorker, err := benchEngine(log, open, 4)
	if err != nil {
		return 0, 0, err
	}
	defer closeWorker()
	stop := runEngine(ctx, worker)
	defer stop()
	// Let the worker settle (owner row, first claim, LISTEN) before timing.
	time.Sleep(300 * time.Millisecond)
	var lat []time.Duration
	for range runs {
		s, err := sub.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: []byte(`{"sleepMs":0}`), Mode: engine.ModeAsync})
		if err != nil {
			return 0, 0, err
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = worker.Wait(wctx, s.Run.RunID, nil)
		cancel()
		if err != nil {
			return 0, 0, err
		}
		subTS.mu.Lock()
		created := subTS.created[s.Run.RunID]
		subTS.mu.Unlock()
		workTS.mu.Lock()
		claimed := workTS.claimed[s.Run.RunID]
		workTS.mu.Unlock()
		lat = append(lat, claimed.Sub(created))
	}
	return percentile(lat, 50), percentile(lat, 99), nil
}

// drainThroughput queues o.schedRuns runs, then starts n engines (each its
// own handle) and returns runs/s from their start to the last final write,
// and the most runs any engine saw running at once summed over engines.
func drainThroughput(ctx context.Context, log *slog.Logger, o *options, n int, open func() (pgStore, error)) (float64, int, error) {
	engines := make([]*engine.Engine, n)
	stamps := make([]*timedStore, n)
	for i := range engines {
		eng, ts, closeFn, err := benchEngine(log, open, o.limit)
		if err != nil {
			return 0, 0, err
		}
		defer closeFn()
		engines[i], stamps[i] = eng, ts
	}
	for range o.schedRuns {
		if _, err := engines[0].Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: []byte(`{"sleepMs":0}`), Mode: engine.ModeAsync}); err != nil {
			return 0, 0, err
		}
	}
	var (
		mu      sync.Mutex
		maxRun  int
		sampled = make(chan struct{})
	)
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	start := time.Now()
	for _, eng := range engines {
		defer runEngine(ctx, eng)()
	}
	go func() {
		defer close(sampled)
		for sctx.Err() == nil {
			total := 0
			for _, eng := range engines {
				total += len(eng.Running())
			}
			mu.Lock()
			maxRun = max(maxRun, total)
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	var last time.Time
	for {
		done := 0
		for _, ts := range stamps {
			ts.mu.Lock()
			done += len(ts.finishes)
			if k := len(ts.finishes); k > 0 && ts.finishes[k-1].After(last) {
				last = ts.finishes[k-1]
			}
			ts.mu.Unlock()
		}
		if done >= o.schedRuns {
			break
		}
		if ctx.Err() != nil || time.Since(start) > 5*time.Minute {
			return 0, 0, fmt.Errorf("%d of %d runs finished", done, o.schedRuns)
		}
		time.Sleep(2 * time.Millisecond)
	}
	stopSampling()
	<-sampled
	return float64(o.schedRuns) / last.Sub(start).Seconds(), maxRun, nil
}
