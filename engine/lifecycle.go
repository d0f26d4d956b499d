package engine

import (
	"context"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
)

// Run registers this process as an owner, then schedules, heartbeats,
// recovers and cleans up until ctx ends. On shutdown it stops claiming,
// lets running runs continue for ShutdownGrace, then interrupts them:
// resumable runs go back to queued, others fail with EXECUTION_ERROR. It
// returns after every run it executed has written its final state.
func (e *Engine) Run(ctx context.Context) error {
	host, _ := os.Hostname()
	now := e.now()
	if err := e.store.RegisterOwner(ctx, Owner{ID: e.ownerID, PID: os.Getpid(), Host: host, StartedAt: now, HeartbeatAt: now, LiveURL: e.liveBaseURL()}); err != nil {
		return err
	}
	e.mu.Lock()
	e.claiming = true
	e.mu.Unlock()
	e.log.Info("engine started", "ownerId", e.ownerID, "maxConcurrentRuns", e.cfg.MaxConcurrentRuns)

	// Recover what dead processes left behind before claiming anything,
	// and forget (keeping their history) the runs that expired while no
	// process ran.
	e.recoverOnce(ctx)
	e.janitorOnce(ctx)

	loops, lctx := errgroup.WithContext(ctx)
	// The scheduler claims when kicked (a local submission or a finished
	// run) or every PollInterval (runs submitted by peers).
	loops.Go(func() error { e.every(lctx, "engine.claim", e.cfg.PollInterval, e.wake, e.claimOnce); return nil })
	// With a PeerWaker store, the other processes' signals wake the
	// scheduler and the waiters at once (peers_wake.go).
	loops.Go(func() error { Guard(lctx, e.log, "engine.listenPeers", func() { e.listenPeers(lctx) }); return nil })
	// Heartbeats extend leases and notice remote cancels.
	loops.Go(func() error {
		e.every(lctx, "engine.heartbeat", e.cfg.HeartbeatInterval, nil, e.heartbeatOnce)
		return nil
	})
	loops.Go(func() error { e.every(lctx, "engine.recovery", e.cfg.RecoveryInterval, nil, e.recoverOnce); return nil })
	loops.Go(func() error { e.every(lctx, "engine.janitor", e.cfg.JanitorInterval, nil, e.janitorOnce); return nil })
	loops.Go(func() error {
		e.every(lctx, "engine.sessionSweep", e.sessionSweepInterval(), nil, e.sweepSessions)
		return nil
	})
	e.kick()
	<-ctx.Done()
	_ = loops.Wait()
	e.shutdown()
	return nil
}

// shutdown stops claiming, waits up to ShutdownGrace, interrupts the rest and
// releases the owner row so peers recover anything left at once.
func (e *Engine) shutdown() {
	e.mu.Lock()
	e.claiming = false
	n := len(e.active)
	e.mu.Unlock()
	graceDur := e.shutdownGrace()
	if n > 0 {
		e.log.Info("shutting down: waiting for running runs", "runs", n, "grace", graceDur, "handoff", e.handoff.Load())
	}
	done := make(chan struct{})
	Go(context.Background(), e.log, "engine.shutdown.wait", func() { e.runsWG.Wait(); close(done) }, nil)
	// Keep leases alive during the grace period.
	hb := time.NewTicker(e.cfg.HeartbeatInterval)
	defer hb.Stop()
	grace := time.NewTimer(graceDur)
	defer grace.Stop()
	hurry := e.hurry
wait:
	for {
		select {
		case <-done:
			break wait
		case <-hb.C:
			e.heartbeatOnce(context.Background())
		case <-hurry:
			e.log.Info("shutdown hurried: interrupting the runs still running")
			hurry = nil
			grace.Reset(0)
		case <-grace.C:
			e.mu.Lock()
			if len(e.active) > 0 {
				e.log.Info("shutdown grace over: interrupting the runs still running", "runs", len(e.active))
			}
			for _, a := range e.active {
				a.cancel(errCauseShutdown)
			}
			e.mu.Unlock()
			<-done
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.store.ReleaseOwner(ctx, e.ownerID, e.now()); err != nil {
		e.log.Warn("release owner failed", "err", err)
	}
	if e.handoff.Load() {
		// Handing off: housekeeping is left to the processes that stay.
		e.log.Info("engine stopped")
		return
	}
	if err := e.store.Compact(ctx); err != nil {
		e.log.Debug("compact failed", "err", err)
	}
	e.log.Info("engine stopped")
}

// every calls f every d, and at once on each signal of wake (nil: none),
// until ctx ends. Each call is guarded (Guard, named site): a panic in one
// is logged and the loop goes on.
func (e *Engine) every(ctx context.Context, site string, d time.Duration, wake <-chan struct{}, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
		Guard(ctx, e.log, site, func() { f(ctx) })
	}
}
