package browser

import (
	"context"
	"errors"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// errStoppedAnswering is why FailOver took an endpoint out of the pool.
var errStoppedAnswering = errors.New("the browser does not answer over CDP")

// Backoff of the loop trying a down endpoint again: from retryFirst,
// doubling up to retryMax between attempts, each bounded by retryAttempt.
const (
	retryFirst   = 250 * time.Millisecond
	retryMax     = 30 * time.Second
	retryAttempt = 30 * time.Second
)

// answerTimeout bounds FailOver's ping of a browser whose connection is
// still open. It is long (a loaded machine answers slowly; a closed
// connection ends the ping at once through the connection's lost context).
const answerTimeout = 10 * time.Second

// watchLocked follows the CDP connection of the current generation (in.mu
// held, right after a connect): when the connection ends without the
// Manager closing it (the browser was killed, the network dropped), the
// generation's lost context is cancelled, which ends every call of its
// tabs, and onLost takes the endpoint out of the pool.
func (in *instance) watchLocked() {
	lost, cancel := context.WithCancel(context.Background())
	in.lost, in.lostCancel = lost, cancel
	if !in.remote {
		return
	}
	b, gen := in.b, in.gen
	events := b.Event() // subscribed now: it ends when the connection does
	engine.Go(context.Background(), in.log, "browser.watchConn", func() {
		for range events {
		}
		cancel()
		if b.GetContext().Err() == nil && in.onLost != nil {
			in.onLost(gen)
		}
	}, nil)
}

// lostCtx returns the context cancelled when generation gen's connection
// ends (already cancelled for an older generation).
func (in *instance) lostCtx(gen int) context.Context {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.lost == nil || in.gen != gen {
		c, cancel := context.WithCancel(context.Background())
		cancel()
		return c
	}
	return in.lost
}

// answers reports whether generation gen of the browser is connected and
// answers a ping (bounded by answerTimeout).
func (in *instance) answers(gen int) bool {
	in.mu.Lock()
	b, cur, lost := in.b, in.gen, in.lost
	in.mu.Unlock()
	if b == nil || cur != gen || lost == nil || lost.Err() != nil {
		return false
	}
	c, cancel := context.WithTimeout(lost, answerTimeout)
	defer cancel()
	_, err := b.Context(c).Version()
	return err == nil
}

// endOnLost ends tab t's calls when its remote browser's connection ends:
// a call waiting for an answer or an event that will never come returns
// at once (mapErr then says the browser exited).
func (s *Session) endOnLost(t *tab) {
	if !s.in.remote {
		return
	}
	stop := context.AfterFunc(s.in.lostCtx(s.gen), t.markCrashed)
	context.AfterFunc(t.crash, func() { stop() })
}

// markDown takes a remote endpoint out of the pool (why: the error that
// showed it) and starts the loop that brings it back once it answers. A
// launched browser is never down: it is launched again on next use.
func (m *Manager) markDown(in *instance, why error) {
	if !in.remote {
		return
	}
	p := m.pool
	p.mu.Lock()
	if in.ep.down {
		p.mu.Unlock()
		return
	}
	in.ep.down = true
	start := !in.ep.retrying
	in.ep.retrying = true
	p.broadcastLocked()
	p.mu.Unlock()
	m.log.Warn("browser endpoint stopped answering; taken out of the pool until it answers again",
		"browser", in.describeSpec(), "err", why)
	if start {
		engine.Go(p.ctx, m.log, "browser.pool.retry", func() { m.retryDown(in) }, func(*engine.Panic) {
			p.mu.Lock()
			in.ep.retrying = false
			p.mu.Unlock()
		})
	}
}

// connLost is onLost: the connection of generation gen ended by itself.
func (m *Manager) connLost(in *instance, gen int) {
	m.markDown(in, errors.New("the CDP connection closed"))
}

// retryDown tries a down endpoint again with backoff until it answers (it
// is then back in the pool) or the Manager closes.
func (m *Manager) retryDown(in *instance) {
	p := m.pool
	delay := retryFirst
	for {
		t := time.NewTimer(delay)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(p.ctx, retryAttempt)
		_, _, err := in.browser(ctx)
		cancel()
		if err == nil {
			p.mu.Lock()
			in.ep.down, in.ep.retrying = false, false
			p.broadcastLocked()
			p.mu.Unlock()
			m.log.Info("browser endpoint answers again; back in the pool", "browser", in.describeSpec())
			return
		}
		m.log.Debug("browser endpoint still down", "browser", in.describeSpec(), "err", err, "retryIn", delay)
		delay = min(2*delay, retryMax)
	}
}
