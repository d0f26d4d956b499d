// Package hostgate keeps a run polite to each site it visits: at most N
// requests in flight per host, an optional minimum spacing between the
// starts of two requests to one host, and a spacing that grows when a
// host answers slowly or with 429/503 and shrinks again when it answers
// well. The run's total concurrency (tabs, connections) is a separate
// bound: eight tabs on one host still send at most N requests there.
//
// A host is the URL's host and port as written (example.com:8080 and
// example.com are two hosts; www.example.com is a third), which is what
// a server's own limits usually count.
//
// What is gated is one page request: a fetch over HTTP (its redirects
// included, which are the same page) or a browser navigation of the main
// document. The subresources a browser loads for the page (scripts,
// images, style sheets) are not gated: they are the page's, and a gate
// per subresource would stall a page half loaded behind its own limit.
package hostgate

import (
	"context"
	"sync"
	"time"
)

// Defaults and bounds of Options.
const (
	// DefaultPerHost is the requests in flight per host when Options says
	// none: small, as Scrapy's and Crawlee's defaults are, so a site sees
	// a couple of visitors rather than a swarm.
	DefaultPerHost = 2
	// MaxPerHost is the largest per-host limit a run may ask for.
	MaxPerHost = 16
	// DefaultMaxSpacing caps the spacing backoff can reach, and the
	// minimum delay a caller or a robots.txt Crawl-delay can set.
	DefaultMaxSpacing = 60 * time.Second
	// backoffFloor is the first spacing a backoff sets on a host that had
	// none.
	backoffFloor = 500 * time.Millisecond
	// relaxBelow: a backoff spacing relaxed under this is dropped.
	relaxBelow = 50 * time.Millisecond
)

// Options configure a Gate.
type Options struct {
	// PerHost is the most requests in flight to one host (DefaultPerHost
	// when 0; values above MaxPerHost are MaxPerHost).
	PerHost int
	// MinDelay is the least time between the starts of two requests to
	// one host (0: none). SetMinDelay can raise it per host.
	MinDelay time.Duration
	// MaxSpacing caps backoff and any minimum delay (DefaultMaxSpacing
	// when 0).
	MaxSpacing time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Gate holds the per-host state of one run. It is safe for concurrent
// use; the zero value is not usable, call New.
type Gate struct {
	opts  Options
	mu    sync.Mutex
	hosts map[string]*hostState
}

// hostState is one host's slots and spacing (under Gate.mu).
type hostState struct {
	inFlight int
	// next is the earliest start of the next request.
	next time.Time
	// minDelay is the largest delay SetMinDelay gave; backoff the spacing
	// Backoff grew and Relax shrinks.
	minDelay, backoff time.Duration
	// freed is closed (and replaced) when a slot is released, waking the
	// requests waiting for one.
	freed chan struct{}
}

// New returns a Gate with o's limits.
func New(o Options) *Gate {
	if o.PerHost <= 0 {
		o.PerHost = DefaultPerHost
	}
	o.PerHost = min(o.PerHost, MaxPerHost)
	if o.MaxSpacing <= 0 {
		o.MaxSpacing = DefaultMaxSpacing
	}
	o.MinDelay = min(max(o.MinDelay, 0), o.MaxSpacing)
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Gate{opts: o, hosts: map[string]*hostState{}}
}

// PerHost is the gate's limit of requests in flight per host.
func (g *Gate) PerHost() int { return g.opts.PerHost }

// host returns host's state, made on first use (g.mu held).
func (g *Gate) host(name string) *hostState {
	h := g.hosts[name]
	if h == nil {
		h = &hostState{freed: make(chan struct{})}
		g.hosts[name] = h
	}
	return h
}

// spacing is the time between two starts on h (g.mu held): the largest of
// the run's minimum delay, the host's own (robots.txt Crawl-delay) and
// its backoff.
func (g *Gate) spacing(h *hostState) time.Duration {
	return max(g.opts.MinDelay, h.minDelay, h.backoff)
}

// Acquire waits until a request to host may start: a slot is free and the
// host's spacing since the previous start has passed. It returns the
// function that frees the slot (call it once the response is read; later
// calls do nothing). Errors: ctx's cause when ctx ends first (nothing is
// held then).
func (g *Gate) Acquire(ctx context.Context, host string) (release func(), err error) {
	for {
		g.mu.Lock()
		h := g.host(host)
		now := g.opts.Now()
		if h.inFlight < g.opts.PerHost && !now.Before(h.next) {
			h.inFlight++
			h.next = now.Add(g.spacing(h))
			g.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { g.release(host) }) }, nil
		}
		var (
			wake  <-chan struct{} = h.freed
			timer *time.Timer
			tick  <-chan time.Time
		)
		if h.inFlight < g.opts.PerHost {
			timer = time.NewTimer(h.next.Sub(now))
			tick = timer.C
		}
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil, context.Cause(ctx)
		case <-wake:
		case <-tick:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// release frees one slot of host and wakes its waiters.
func (g *Gate) release(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(host)
	h.inFlight--
	close(h.freed)
	h.freed = make(chan struct{})
}

// SetMinDelay sets the least time between two request starts on host
// (robots.txt Crawl-delay, for one): the largest delay set wins, capped
// at the gate's MaxSpacing.
func (g *Gate) SetMinDelay(host string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(host)
	h.minDelay = max(h.minDelay, min(d, g.opts.MaxSpacing))
}

// Backoff tells the gate host is struggling (it answered 429 or 503, or
// slowly): the host's spacing doubles, from 500 ms when it had none, up
// to MaxSpacing, and the next start is pushed out by it.
func (g *Gate) Backoff(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(host)
	h.backoff = min(max(2*g.spacing(h), backoffFloor), g.opts.MaxSpacing)
	h.next = later(h.next, g.opts.Now().Add(h.backoff))
}

// Relax tells the gate host answered well: its backoff halves, and is
// dropped below 50 ms (the run's and robots.txt's delays stay).
func (g *Gate) Relax(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.hosts[host]
	if h == nil || h.backoff == 0 {
		return
	}
	h.backoff /= 2
	if h.backoff < relaxBelow {
		h.backoff = 0
	}
}

// Spacing reports host's current spacing between request starts (the
// largest of the minimum delays and its backoff), for tests and events.
func (g *Gate) Spacing(host string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spacing(g.host(host))
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
