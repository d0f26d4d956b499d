package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// TestProxyRangesTable (issue 26 item 7, acceptance 5): the shared table
// through the proxy, with the HTTP path's dialer. For every row, CONNECT
// by a name that resolves to the row's address and by the literal: a
// refused row answers 403 TRUST_LEVEL_NOT_ALLOWED naming the range and
// nothing is dialled; an allowed row is dialled once at its address (the
// dial hook connects it to a loopback echo server, so nothing leaves the
// machine) and the tunnel carries bytes. bfdb840's proxy let multicast,
// broadcast, 0.0.0.0/8, the machine's own addresses and every new range
// through.
func TestProxyRangesTable(t *testing.T) {
	echo := newTCPEcho(t)
	for _, c := range netpolicytest.Cases() {
		var mu sync.Mutex
		var dials []string
		p, err := Start(Options{
			Policy: func() engine.URLPolicy {
				return engine.URLPolicy{TrustLevel: "restricted", LocalAddrs: netpolicytest.Own,
					Resolve: func(string) ([]netip.Addr, error) { return []netip.Addr{c.Addr}, nil }}
			},
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				mu.Lock()
				dials = append(dials, addr)
				mu.Unlock()
				var d net.Dialer
				return d.DialContext(ctx, network, echo.ln.Addr().String())
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, host := range []string{"target.test", c.Addr.String()} {
			target := net.JoinHostPort(host, "443")
			status, body, conn, br := connectVia(t, p, target)
			mu.Lock()
			got := append([]string(nil), dials...)
			dials = nil
			mu.Unlock()
			if c.Refused {
				if status != http.StatusForbidden || !strings.Contains(body, "TRUST_LEVEL_NOT_ALLOWED") || !strings.Contains(body, c.Range) {
					t.Errorf("%s: CONNECT %s: %d %q, want 403 TRUST_LEVEL_NOT_ALLOWED naming %q", c.Name, target, status, body, c.Range)
				}
				if len(got) != 0 {
					t.Errorf("%s: CONNECT %s dialled %q", c.Name, target, got)
				}
				continue
			}
			want := netip.AddrPortFrom(c.Addr.Unmap(), 443).String()
			if status != http.StatusOK || len(got) != 1 || got[0] != want {
				t.Errorf("%s: CONNECT %s: %d %q, dials %q; want 200 through one dial of %s", c.Name, target, status, body, got, want)
				continue
			}
			echoOnce(t, conn, br, "ping")
			conn.Close()
		}
		refused := int64(0)
		if c.Refused {
			refused = 2
		}
		if n := p.Refused(); n != refused {
			t.Errorf("%s: Refused() = %d, want %d", c.Name, n, refused)
		}
		_ = p.Close()
	}
}
