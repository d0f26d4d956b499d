package netpolicy

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
)

// DefaultDialTimeout bounds one DialContext (lookup and connection
// attempts) when Dialer.Timeout is zero and the context has no earlier
// deadline.
const DefaultDialTimeout = 15 * time.Second

// Dialer is the one checked dialer: it resolves a host once, checks every
// address of the answer, and connects only to an address it checked — a
// DNS answer that changes between the check and the connection
// (rebinding) cannot reach a refused address, because no second lookup
// happens. The HTTP fetch path and the egress proxy both connect through
// one (engine.NewCheckedDialer builds it from the URL policy). Its
// fields are set once; DialContext is safe for concurrent use.
type Dialer struct {
	// Lookup resolves a host name (never called for an IP literal).
	// Required.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Check decides one address of host (unmapped, with the port): nil
	// allows it, an error refuses it and is returned inside a
	// *RefusedError. Required.
	Check func(host string, ap netip.AddrPort) error
	// LookupFailed says what a failed or empty lookup becomes: a non-nil
	// error is returned inside a *RefusedError (fail closed: a host whose
	// addresses cannot be checked is refused), nil returns the lookup
	// error itself. Nil means the lookup error.
	LookupFailed func(host string, err error) error
	// Dial connects to a checked "ip:port", never a host name. Nil uses a
	// net.Dialer whose Control hook checks the socket's address once more
	// just before connect. Tests pass a hook that records each attempt.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds one DialContext (DefaultDialTimeout when 0).
	Timeout time.Duration
}

// RefusedError is the error of a connection the policy refused: an
// address of the answer failed Check (Addr set), or the host could not be
// resolved and LookupFailed refused it (Addr zero). Err is the policy's
// reason.
type RefusedError struct {
	Host string
	Addr netip.AddrPort
	Err  error
}

// Error returns the policy's reason.
func (r *RefusedError) Error() string { return r.Err.Error() }

// Unwrap returns the policy's reason, so callers can match its type.
func (r *RefusedError) Unwrap() error { return r.Err }

// DialContext connects to hostport. Errors: a *RefusedError (nothing was
// dialled) when the policy refuses an address of the answer — an answer
// that mixes public and internal addresses is refused as a whole — or the
// failed lookup; a malformed hostport; the lookup error; the connection
// error of the first address tried.
func (d *Dialer) DialContext(ctx context.Context, network, hostport string) (net.Conn, error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, fmt.Errorf("bad address %q: %w", hostport, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("bad port in %q: give a port from 1 to 65535", hostport)
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	checked := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.WithZone("").Unmap(), uint16(port))
		if err := d.Check(host, ap); err != nil {
			return nil, &RefusedError{Host: host, Addr: ap, Err: err}
		}
		checked = append(checked, ap)
	}
	var firstErr error
	for _, ap := range checked {
		c, err := d.connect(ctx, network, host, ap)
		if err == nil {
			return c, nil
		}
		var ref *RefusedError
		if errors.As(err, &ref) {
			return nil, ref
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

// resolve returns host's addresses: the literal itself, or the lookup's
// answer. A failed or empty lookup goes through LookupFailed.
func (d *Dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(name); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := d.Lookup(ctx, name)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("lookup %s: no addresses", host)
	}
	if err == nil {
		return addrs, nil
	}
	if d.LookupFailed != nil {
		if refusal := d.LookupFailed(host, err); refusal != nil {
			return nil, &RefusedError{Host: host, Err: refusal}
		}
	}
	return nil, err
}

// connect dials one checked address.
func (d *Dialer) connect(ctx context.Context, network, host string, ap netip.AddrPort) (net.Conn, error) {
	if d.Dial != nil {
		return d.Dial(ctx, network, ap.String())
	}
	nd := net.Dialer{
		KeepAlive: 30 * time.Second,
		// The socket's own address is checked again just before connect:
		// whatever produced it, nothing else is reached.
		Control: func(_, address string, _ syscall.RawConn) error {
			got, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("connect to %q: not an ip:port", address)
			}
			got = netip.AddrPortFrom(got.Addr().WithZone("").Unmap(), got.Port())
			if got != ap {
				return fmt.Errorf("connect to %s: not the checked address %s", got, ap)
			}
			if err := d.Check(host, got); err != nil {
				return &RefusedError{Host: host, Addr: got, Err: err}
			}
			return nil
		},
	}
	return nd.DialContext(ctx, network, ap.String())
}
