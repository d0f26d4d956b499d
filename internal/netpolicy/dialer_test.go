package netpolicy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/browsertask/browsertask/internal/netpolicy"
	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// tableDialer is a Dialer whose lookup answers addr for every name, whose
// check is Classify with the table's own addresses, and whose Dial only
// records the address it was given (nothing leaves the process).
func tableDialer(addr netip.Addr, dials *[]string) *netpolicy.Dialer {
	return &netpolicy.Dialer{
		Lookup: func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{addr}, nil },
		Check: func(host string, ap netip.AddrPort) error {
			if v := netpolicy.Classify(ap.Addr(), netpolicytest.Own()); v.Internal {
				return fmt.Errorf("%s (%s): %s", host, ap, v)
			}
			return nil
		},
		Dial: func(_ context.Context, _, a string) (net.Conn, error) {
			*dials = append(*dials, a)
			c1, c2 := net.Pipe()
			_ = c2.Close()
			return c1, nil
		},
	}
}

// TestDialerTable: by name and by literal, a refused row is a
// *RefusedError before any connection attempt; an allowed row is dialled
// once, at the checked (unmapped) address.
func TestDialerTable(t *testing.T) {
	for _, c := range netpolicytest.Cases() {
		for _, host := range []string{"target.test", c.Addr.String()} {
			var dials []string
			d := tableDialer(c.Addr, &dials)
			conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, "443"))
			if c.Refused {
				var ref *netpolicy.RefusedError
				if !errors.As(err, &ref) || ref.Addr.Addr() != c.Addr.Unmap() || ref.Host != host {
					t.Errorf("%s via %s: err = %v, want a RefusedError for %s", c.Name, host, err, c.Addr)
				}
				if len(dials) != 0 {
					t.Errorf("%s via %s: dialled %q", c.Name, host, dials)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s via %s: %v", c.Name, host, err)
				continue
			}
			conn.Close()
			if want := netip.AddrPortFrom(c.Addr.Unmap(), 443).String(); len(dials) != 1 || dials[0] != want {
				t.Errorf("%s via %s: dials = %q, want [%s]", c.Name, host, dials, want)
			}
		}
	}
}

// TestDialerMixedAnswerRefusedWhole: one internal address in an answer
// refuses the host, even when a public address comes first.
func TestDialerMixedAnswerRefusedWhole(t *testing.T) {
	var dials atomic.Int64
	d := &netpolicy.Dialer{
		Lookup: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("100.64.0.1")}, nil
		},
		Check: func(_ string, ap netip.AddrPort) error {
			if netpolicy.Classify(ap.Addr(), nil).Internal {
				return errors.New("internal")
			}
			return nil
		},
		Dial: func(context.Context, string, string) (net.Conn, error) { dials.Add(1); return nil, errors.New("no") },
	}
	_, err := d.DialContext(context.Background(), "tcp", "mixed.test:80")
	var ref *netpolicy.RefusedError
	if !errors.As(err, &ref) || ref.Addr.String() != "100.64.0.1:80" || dials.Load() != 0 {
		t.Fatalf("err = %v, dials = %d; want a refusal of 100.64.0.1:80 and no dial", err, dials.Load())
	}
}

// TestDialerLookupFailed: LookupFailed turns a failed or empty lookup into
// a refusal (fail closed) or, returning nil, lets the lookup error through.
func TestDialerLookupFailed(t *testing.T) {
	failing := func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }
	empty := func(context.Context, string) ([]netip.Addr, error) { return nil, nil }
	closed := func(host string, err error) error { return fmt.Errorf("%s unresolvable: %w", host, err) }
	for _, lookup := range []func(context.Context, string) ([]netip.Addr, error){failing, empty} {
		d := &netpolicy.Dialer{Lookup: lookup, Check: func(string, netip.AddrPort) error { return nil }, LookupFailed: closed}
		_, err := d.DialContext(context.Background(), "tcp", "gone.test:80")
		var ref *netpolicy.RefusedError
		if !errors.As(err, &ref) || ref.Host != "gone.test" || ref.Addr.IsValid() {
			t.Errorf("fail closed: err = %v", err)
		}
		d.LookupFailed = func(string, error) error { return nil }
		_, err = d.DialContext(context.Background(), "tcp", "gone.test:80")
		if err == nil || errors.As(err, &ref) {
			t.Errorf("fail open: err = %v, want the lookup error", err)
		}
	}
	d := &netpolicy.Dialer{Lookup: failing, Check: func(string, netip.AddrPort) error { return nil }}
	for _, hp := range []string{"no-port.test", "x.test:0", "x.test:99999"} {
		if _, err := d.DialContext(context.Background(), "tcp", hp); err == nil {
			t.Errorf("%s: dialled", hp)
		}
	}
}

// TestDialerControlRechecks: with the real net.Dialer, the socket's
// address is checked once more just before connect; a check that refuses
// there leaves the listener without a connection.
func TestDialerControlRechecks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	var checks atomic.Int64
	d := &netpolicy.Dialer{
		Lookup: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
		Check: func(string, netip.AddrPort) error {
			if checks.Add(1) == 1 {
				return nil // the answer's check passes; the socket's does not
			}
			return errors.New("refused at the socket")
		},
	}
	_, err = d.DialContext(context.Background(), "tcp", "flip.test:"+fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	var ref *netpolicy.RefusedError
	if !errors.As(err, &ref) || checks.Load() != 2 {
		t.Fatalf("err = %v after %d checks, want a RefusedError from the socket's check", err, checks.Load())
	}
	// A connection that was made would be accepted before the listener
	// closes; dial once more, allowed, to order after any stray accept.
	d.Check = func(string, netip.AddrPort) error { return nil }
	c, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	_, _ = c.Read(buf) // the accept loop closes it: EOF once accepted
	c.Close()
	if n := accepted.Load(); n != 1 {
		t.Fatalf("listener accepted %d connections, want 1 (only the allowed one)", n)
	}
}
