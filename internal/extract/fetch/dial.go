package fetch

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// Resolver looks up a host's addresses. *net.Resolver implements it; tests
// pass a double that answers what they want (a public-looking name that
// resolves to 127.0.0.1, an answer that changes between two lookups).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// LookupNetIP calls f.
func (f ResolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// ownAddrsTTL is how long a Fetcher reuses the list of this machine's
// addresses (refused under restricted, and at the daemon's port when it
// listens on a wildcard address).
const ownAddrsTTL = 10 * time.Second

// newDialer returns the transport's dialer: the URL policy's one checked
// dialer (engine.NewCheckedDialer), resolving with res. It refuses with a
// *netpolicy.RefusedError whose Err is the *engine.Error: every address of
// the answer is checked against the trust level (under restricted every
// internal address netpolicy.Classify knows, the machine's own included)
// and the deny list before one is dialled, and only a checked address is
// dialled — a DNS answer that changes between the policy's pre-check and
// the connection cannot reach a refused address.
func newDialer(pol engine.URLPolicy, res Resolver, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *netpolicy.Dialer {
	return engine.NewCheckedDialer(func() engine.URLPolicy { return pol },
		func(ctx context.Context, host string) ([]netip.Addr, error) { return res.LookupNetIP(ctx, "ip", host) },
		dial)
}
