package netpolicy

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// InterfaceAddrs lists the addresses of this machine's interfaces (nil
// when they cannot be read). A daemon, a database or a dev server bound to
// 0.0.0.0 answers on every one of them, public ones included, so trust
// restricted refuses them all.
func InterfaceAddrs() []netip.Addr {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(ifAddrs))
	for _, ia := range ifAddrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil {
			out = append(out, p.Addr().WithZone("").Unmap())
		}
	}
	return out
}

// OwnAddrs caches InterfaceAddrs for a while: the in-browser check runs
// once per request, and reading the interfaces each time would cost a
// kernel round trip per request. Addresses change rarely (DHCP, a VPN
// coming up); ttl bounds how late a new one is known. Safe for concurrent
// use.
type OwnAddrs struct {
	ttl   time.Duration
	read  func() []netip.Addr
	mu    sync.Mutex
	addrs []netip.Addr
	until time.Time
}

// NewOwnAddrs returns a cache of this machine's addresses kept for ttl.
func NewOwnAddrs(ttl time.Duration) *OwnAddrs {
	return &OwnAddrs{ttl: ttl, read: InterfaceAddrs}
}

// List returns the machine's addresses, read again when the cached list is
// older than the cache's ttl. Callers must not change the slice.
func (o *OwnAddrs) List() []netip.Addr {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.addrs == nil || !now.Before(o.until) {
		o.addrs = o.read()
		if o.addrs == nil {
			o.addrs = []netip.Addr{}
		}
		o.until = now.Add(o.ttl)
	}
	return o.addrs
}
