package httpfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browsertask/browsertask/engine"
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

// Refusal is the error of a connection the URL policy refused at the
// dialer: the address a host resolved to is internal under trust
// restricted, or is the daemon's own listener. Err is the domain error
// (engine.CheckAddr's, or one of this package's extra checks).
type Refusal struct {
	Host string
	Addr netip.AddrPort
	Err  *engine.Error
}

func (r *Refusal) Error() string { return r.Err.Message }

// Unwrap returns the domain error.
func (r *Refusal) Unwrap() error { return r.Err }

// dialTimeout bounds one connection attempt (lookup included) when the
// caller's context has no earlier deadline.
const dialTimeout = 15 * time.Second

// checkedDialer resolves a host once, checks every address of the answer
// against the URL policy, and connects only to an address it checked, so a
// DNS answer that changes between the policy check and the connection
// (rebinding) cannot reach a refused address.
type checkedDialer struct {
	policy   engine.URLPolicy
	resolver Resolver
	// dial connects to a checked "ip:port"; nil uses a net.Dialer whose
	// Control hook checks the socket's address once more.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// localAddrs lists this machine's interface addresses (for wildcard
	// deny entries); replaced in tests.
	localAddrs func() []netip.Addr
}

// DialContext is the transport's dialer. Errors: *Refusal (wrapped) when
// the policy refuses an address of the answer, the lookup error, or the
// connection error of the last address tried.
func (d *checkedDialer) DialContext(ctx context.Context, network, hostport string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, fmt.Errorf("bad address %q: %w", hostport, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", hostport)
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(name); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = d.resolver.LookupNetIP(ctx, "ip", name)
		if err != nil {
			if restricted(d.policy) {
				return nil, &Refusal{Host: host, Err: engine.Errorf(engine.TrustLevelNotAllowed,
					"%s cannot be resolved (%v), and trust level restricted refuses hosts whose addresses it cannot check; use a host that resolves to a public address, or run the server with trust level local", host, err).
					WithDetails(map[string]any{"host": host, "reason": engine.ReasonUnresolvable})}
			}
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("lookup %s: no addresses", host)
		}
	}
	// Every address is checked before any is dialled: an answer that
	// mixes public and internal addresses is refused as a whole, as
	// engine.CheckURL does.
	checked := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if err := d.check(host, ap); err != nil {
			return nil, err
		}
		checked = append(checked, ap)
	}
	var firstErr error
	for _, ap := range checked {
		c, err := d.connect(ctx, network, host, ap)
		if err == nil {
			return c, nil
		}
		var ref *Refusal
		if errors.As(err, &ref) {
			return nil, err
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// connect dials one checked address.
func (d *checkedDialer) connect(ctx context.Context, network, host string, ap netip.AddrPort) (net.Conn, error) {
	if d.dial != nil {
		return d.dial(ctx, network, ap.String())
	}
	nd := net.Dialer{
		// The socket's own address is checked again just before connect:
		// whatever produced this address, nothing else is reached.
		Control: func(_, address string, _ syscall.RawConn) error {
			got, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("connect to %q: not an ip:port", address)
			}
			if got.Addr().Unmap() != ap.Addr() || got.Port() != ap.Port() {
				return fmt.Errorf("connect to %s: not the checked address %s", got, ap)
			}
			return d.check(host, got)
		},
	}
	return nd.DialContext(ctx, network, ap.String())
}

// check applies the policy to one address of host: engine.CheckAddr
// (the daemon's own listener always; loopback, private, link-local and
// unspecified under restricted), plus multicast, broadcast and 0.0.0.0/8
// under restricted, plus this machine's own addresses at the port of a
// wildcard deny entry (a daemon listening on 0.0.0.0:PORT is reachable
// through every local address).
func (d *checkedDialer) check(host string, ap netip.AddrPort) error {
	refuse := func(e *engine.Error) error { return &Refusal{Host: host, Addr: ap, Err: e} }
	if err := engine.CheckAddr(d.policy, host, ap); err != nil {
		return refuse(engine.AsError(err))
	}
	a := ap.Addr().Unmap()
	if restricted(d.policy) && (a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) ||
		(a.Is4() && a.As4()[0] == 0)) {
		return refuse(engine.Errorf(engine.TrustLevelNotAllowed,
			"%s connects to the address %s, which trust level restricted refuses (multicast, broadcast or this-network); use a public URL or run the server with trust level local", host, ap).
			WithDetails(map[string]any{"host": host, "addr": ap.String()}))
	}
	for _, deny := range d.policy.DenyHosts {
		dh, dp, err := net.SplitHostPort(deny)
		if err != nil || dp != strconv.Itoa(int(ap.Port())) {
			continue
		}
		if da, err := netip.ParseAddr(dh); dh != "" && (err != nil || !da.IsUnspecified()) {
			continue
		}
		for _, own := range d.ownAddrs() {
			if own == a {
				return refuse(engine.Errorf(engine.InvalidParameter,
					"%s (%s) is an address of this machine, where this server listens on %s; it is never reachable from a page; use another URL", host, ap, deny).
					WithDetails(map[string]any{"host": host, "addr": ap.String()}))
			}
		}
	}
	return nil
}

// ownAddrs returns this machine's interface addresses.
func (d *checkedDialer) ownAddrs() []netip.Addr {
	if d.localAddrs != nil {
		return d.localAddrs()
	}
	return interfaceAddrs()
}

// interfaceAddrs lists the addresses of this machine's interfaces.
func interfaceAddrs() []netip.Addr {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(ifAddrs))
	for _, ia := range ifAddrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// restricted reports trust level restricted.
func restricted(p engine.URLPolicy) bool { return strings.EqualFold(p.TrustLevel, "restricted") }
