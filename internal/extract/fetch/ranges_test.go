package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/netpolicy"
	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// dialRecorder records every connection attempt and connects each to the
// one loopback fixture, so nothing leaves the machine whatever the policy
// lets through.
type dialRecorder struct {
	to    string // the fixture's 127.0.0.1:PORT
	mu    sync.Mutex
	addrs []string
}

func (d *dialRecorder) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.to)
}

func (d *dialRecorder) attempts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// TestRestrictedRangesRefusedAtDial (issue 26 item 7, acceptance 5): the
// shared table through the whole fetch path. The name answers a public
// address to the policy's pre-check and the row's address to the
// connection's own lookup (a rebinding answer), so the dialer is what
// decides: a refused row is TRUST_LEVEL_NOT_ALLOWED naming the range with
// no connection attempt; an allowed row is fetched, dialled once at the
// address the lookup gave. bfdb840's dialer connected to 100.64.0.1,
// ::127.0.0.1, 64:ff9b::7f00:1 and the other new rows.
func TestRestrictedRangesRefusedAtDial(t *testing.T) {
	srv := fixture.New(t)
	for _, c := range netpolicytest.Cases() {
		var mu sync.Mutex
		lookups := 0
		res := ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			lookups++
			if lookups == 1 {
				return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil
			}
			return []netip.Addr{c.Addr}, nil
		})
		rec := &dialRecorder{to: srv.Host()}
		pol := engine.URLPolicy{TrustLevel: "restricted", LocalAddrs: netpolicytest.Own}
		f := newFetcher(t, Options{Policy: pol, Resolver: res, Dial: rec.dial})
		pg, err := fetch(t, f, "http://target.test:"+port(srv)+"/page/1")
		got := rec.attempts()
		if !c.Refused {
			want := net.JoinHostPort(c.Addr.Unmap().String(), port(srv))
			if err != nil || pg.Status != 200 || len(got) != 1 || got[0] != want {
				t.Errorf("%s (%s): page %v, err %v, dials %q; want 200 through one dial of %s", c.Name, c.Addr, pg, err, got, want)
			}
			continue
		}
		e := engine.AsError(err)
		if e == nil || e.Code != engine.TrustLevelNotAllowed || !strings.Contains(e.Message, c.Range) ||
			!strings.Contains(e.Message, "connects to the internal address") {
			t.Errorf("%s (%s): err = %v, want the dialer's TRUST_LEVEL_NOT_ALLOWED naming %q", c.Name, c.Addr, err, c.Range)
		}
		if len(got) != 0 {
			t.Errorf("%s (%s): dialled %q", c.Name, c.Addr, got)
		}
	}
	if n := srv.TotalHits(); n != countAllowed() {
		t.Fatalf("fixture hits = %d, want %d (the allowed rows)", n, countAllowed())
	}
}

// TestRestrictedRangesLiteralsAtDial: the dialer itself refuses every
// refused row given as an IP literal or by name, before any attempt.
func TestRestrictedRangesLiteralsAtDial(t *testing.T) {
	for _, c := range netpolicytest.Cases() {
		if !c.Refused {
			continue
		}
		rec := &dialRecorder{to: "127.0.0.1:9"}
		res := ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return []netip.Addr{c.Addr}, nil })
		d := newDialer(engine.URLPolicy{TrustLevel: "restricted", LocalAddrs: netpolicytest.Own}, res, rec.dial)
		for _, host := range []string{c.Addr.String(), "target.test"} {
			_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, "80"))
			var ref *netpolicy.RefusedError
			if !errors.As(err, &ref) || engine.AsError(ref.Err).Code != engine.TrustLevelNotAllowed {
				t.Errorf("%s via %s: err = %v, want a TRUST_LEVEL_NOT_ALLOWED refusal", c.Name, host, err)
			}
		}
		if got := rec.attempts(); len(got) != 0 {
			t.Errorf("%s: dialled %q", c.Name, got)
		}
	}
}

// countAllowed counts the table's allowed rows.
func countAllowed() int {
	n := 0
	for _, c := range netpolicytest.Cases() {
		if !c.Refused {
			n++
		}
	}
	return n
}
