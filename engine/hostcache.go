package engine

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// HostCache reuses the answers of host lookups for a while, so a page
// load or a crawl checks each host once instead of once per request. Only
// answers are kept: a failed or empty lookup is asked again next time (a
// transient error must not become a verdict for ttl). A cached answer
// opens no hole where it is used only for the policy's pre-check: the
// dialers resolve again and check the address they connect to.
type HostCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]hostEntry
}

type hostEntry struct {
	addrs []netip.Addr
	until time.Time
}

// hostCacheMax bounds a HostCache; past it the cache starts over.
const hostCacheMax = 4096

// NewHostCache returns a cache whose answers are reused for ttl.
func NewHostCache(ttl time.Duration) *HostCache {
	return &HostCache{ttl: ttl, entries: map[string]hostEntry{}}
}

// Resolve answers host from the cache or looks it up with base (nil: the
// system resolver), as URLPolicy.LookupHost does.
func (c *HostCache) Resolve(host string, base func(string) ([]netip.Addr, error)) ([]netip.Addr, error) {
	now := time.Now()
	c.mu.Lock()
	if e, ok := c.entries[host]; ok && now.Before(e.until) {
		c.mu.Unlock()
		return e.addrs, nil
	}
	c.mu.Unlock()
	addrs, err := URLPolicy{Resolve: base}.LookupHost(host)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) > hostCacheMax {
		c.entries = map[string]hostEntry{}
	}
	c.entries[host] = hostEntry{addrs: addrs, until: now.Add(c.ttl)}
	c.mu.Unlock()
	return addrs, nil
}

// LookupHostContext is LookupHost giving up when ctx ends: a resolver that
// hangs must not hold a request forever (the lookup itself goes on in the
// background until its resolver returns).
func (p URLPolicy) LookupHostContext(ctx context.Context, host string) ([]netip.Addr, error) {
	type answer struct {
		addrs []netip.Addr
		err   error
	}
	ch := make(chan answer, 1)
	Go(ctx, nil, "engine.lookupHost", func() {
		a, err := p.LookupHost(host)
		ch <- answer{a, err}
	}, func(rec *Panic) { ch <- answer{nil, InternalError(rec)} })
	select {
	case a := <-ch:
		return a.addrs, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
