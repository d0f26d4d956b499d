package browser

import (
	"context"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// poolState is the Manager's account of its browsers (the --browser
// endpoints): how many tabs each has open against its capacity, and which
// ones are down. A remote endpoint that stops answering (its CDP connection
// closed, a connect failed) is down: no new session or tab is placed on it
// while a background loop tries it again with backoff (pool_health.go),
// and it is back once it answers.
type poolState struct {
	// ctx ends when the Manager closes, and with it the retry loops.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// changed is closed (and replaced) whenever a tab is freed or an
	// endpoint comes back, waking the acquisitions waiting for room.
	changed chan struct{}
	next    int // round-robin among equally free endpoints
}

// endpointState is one instance's share of poolState (under poolState.mu).
type endpointState struct {
	capacity int // most tabs open at once (0 = no limit)
	inUse    int // tabs held now
	sessions int // sessions placed on it and not closed
	down     bool
	retrying bool
}

// free is how many more tabs the endpoint takes (an endpoint without a
// capacity counts as having maxCapacity).
func (e *endpointState) free() int {
	c := e.capacity
	if c == 0 {
		c = maxCapacity
	}
	return c - e.inUse
}

// broadcastLocked wakes every waiter for room (pool.mu held).
func (p *poolState) broadcastLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// pickLocked returns the endpoint among cands with the most room (score),
// the next one in round-robin order on a tie; nil when cands is empty.
func (p *poolState) pickLocked(cands []*instance, score func(*instance) int) *instance {
	var best *instance
	bestScore := 0
	for k := range cands {
		in := cands[(p.next+k)%len(cands)]
		if s := score(in); best == nil || s > bestScore {
			best, bestScore = in, s
		}
	}
	if best != nil {
		p.next++
	}
	return best
}

// pickForSession chooses the endpoint a new session goes to: the one up
// with the most room, counting each open session as a tab to come. When
// every endpoint is down it still picks one, so the attempt to reach it
// gives the caller the real error (and a recovered endpoint is found).
func (m *Manager) pickForSession() *instance {
	p := m.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	up := m.upLocked()
	if len(up) == 0 {
		up = m.instances
	}
	in := p.pickLocked(up, func(in *instance) int { return in.ep.free() - in.ep.sessions })
	in.ep.sessions++
	return in
}

// retryingLocked reports whether a down endpoint is being tried again, so
// waiting for one to come back can end (pool.mu held).
func (m *Manager) retryingLocked() bool {
	for _, in := range m.instances {
		if in.ep.down && in.ep.retrying {
			return true
		}
	}
	return false
}

// upLocked returns the endpoints not down (pool.mu held).
func (m *Manager) upLocked() []*instance {
	var up []*instance
	for _, in := range m.instances {
		if !in.ep.down {
			up = append(up, in)
		}
	}
	return up
}

// anyUp reports whether an endpoint of the pool is up.
func (m *Manager) anyUp() bool {
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	return len(m.upLocked()) > 0
}

// sessionClosed uncounts a session placed on in.
func (m *Manager) sessionClosed(in *instance) {
	m.pool.mu.Lock()
	if in.ep.sessions > 0 {
		in.ep.sessions--
	}
	m.pool.mu.Unlock()
}

// reserve takes one tab of capacity on an endpoint, waiting while every
// allowed one is full: only is the endpoint a session is bound to, or nil
// for any endpoint up (a spread session). Errors: ctx's cause; an
// EXECUTION_ERROR when the only allowed endpoint is down, or every one is.
//
// When every endpoint is down, a spread session's tab (only nil) waits up
// to Options.OutageWait for one to answer again (the retry loops of
// pool_health.go bring it back), so a browser farm that restarts does not
// fail the runs on it; a session bound to one endpoint fails at once (its
// pages, cookies and tabs died with that browser).
func (m *Manager) reserve(ctx context.Context, only *instance) (*instance, error) {
	p := m.pool
	var outage <-chan time.Time // set when every endpoint is found down
	for {
		p.mu.Lock()
		cands := m.upLocked()
		if only != nil {
			cands = nil
			if !only.ep.down || len(m.instances) == 1 {
				cands = []*instance{only}
			}
		}
		if len(cands) == 0 {
			wait := m.opts.OutageWait
			if wait == 0 {
				wait = DefaultOutageWait
			}
			if only != nil || wait < 0 || !m.retryingLocked() {
				p.mu.Unlock()
				if only != nil {
					return nil, engine.Errorf(engine.ExecutionError, "the browser at %s stopped answering", only.describeSpec())
				}
				return nil, engine.Errorf(engine.ExecutionError, "no browser of the pool answers (every --browser endpoint is down)")
			}
			changed := p.changed
			p.mu.Unlock()
			if outage == nil {
				m.log.Warn("every browser of the pool is down; the run waits for one to answer again", "wait", wait)
				t := time.NewTimer(wait)
				defer t.Stop()
				outage = t.C
			}
			select {
			case <-changed:
				continue
			case <-outage:
				e := engine.Errorf(engine.ExecutionError, "no browser of the pool answered for %s (every --browser endpoint is down; raise --browser-outage-wait to wait longer)", wait)
				e.Recovery = "start the browsers again (or fix the network to them), then submit the same run again: the pages it finished are kept and not fetched again"
				return nil, e
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		var room []*instance
		for _, in := range cands {
			if in.ep.free() > 0 {
				room = append(room, in)
			}
		}
		if in := p.pickLocked(room, func(in *instance) int { return in.ep.free() }); in != nil {
			in.ep.inUse++
			p.mu.Unlock()
			return in, nil
		}
		wake := p.changed
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// unreserve hands back a tab of capacity taken by reserve.
func (m *Manager) unreserve(in *instance) {
	p := m.pool
	p.mu.Lock()
	in.ep.inUse--
	p.broadcastLocked()
	p.mu.Unlock()
}

// isDown reports whether in is out of the pool.
func (m *Manager) isDown(in *instance) bool {
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	return in.ep.down
}

// Capacity reports each endpoint's spec, capacity and tabs open now, in
// --browser order (the runtime profile and tests read it).
func (m *Manager) Capacity() []EndpointLoad {
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	out := make([]EndpointLoad, len(m.instances))
	for i, in := range m.instances {
		out[i] = EndpointLoad{Spec: in.spec, Capacity: in.ep.capacity, InUse: in.ep.inUse, Down: in.ep.down}
	}
	return out
}

// EndpointLoad is one endpoint's state as Capacity reports it.
type EndpointLoad struct {
	Spec     string
	Capacity int
	InUse    int
	Down     bool
}
