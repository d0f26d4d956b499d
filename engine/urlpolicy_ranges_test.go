package engine

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// urlHost writes a as a URL host: IPv6 in brackets.
func urlHost(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return "[" + a.String() + "]"
}

// TestRestrictedRangesTable (issue 26 item 7): under trust restricted every
// refused row of the shared table is TRUST_LEVEL_NOT_ALLOWED at submission
// (CheckURL with the address as the URL's literal host, and with a name
// that resolves to it; the in-browser request check is CheckURL too) and
// at connect time (CheckAddr), with the range named in the message; every
// allowed row passes all three. Under trust local every row passes.
// bfdb840 let 100.64.0.1, 198.18.0.1, ::127.0.0.1, 64:ff9b::7f00:1,
// 2002:7f00:1::1, Teredo and the rest of the new rows through.
func TestRestrictedRangesTable(t *testing.T) {
	for _, c := range netpolicytest.Cases() {
		resolve := func(string) ([]netip.Addr, error) { return []netip.Addr{c.Addr}, nil }
		own := netpolicytest.Own
		restricted := URLPolicy{TrustLevel: "restricted", Resolve: resolve, LocalAddrs: own}
		local := URLPolicy{TrustLevel: "local", Resolve: resolve, LocalAddrs: own}
		checks := map[string]func(URLPolicy) error{
			"literal URL":  func(p URLPolicy) error { return CheckURL("http://"+urlHost(c.Addr)+":8080/x", p) },
			"resolved URL": func(p URLPolicy) error { return CheckURL("https://target.test/x", p) },
			"connect": func(p URLPolicy) error {
				return CheckAddr(p, "target.test", netip.AddrPortFrom(c.Addr, 443))
			},
		}
		for door, check := range checks {
			e := AsError(check(restricted))
			switch {
			case !c.Refused && e != nil:
				t.Errorf("%s (%s), %s: refused: %v", c.Name, c.Addr, door, e)
			case c.Refused && (e == nil || e.Code != TrustLevelNotAllowed):
				t.Errorf("%s (%s), %s: %v, want TRUST_LEVEL_NOT_ALLOWED", c.Name, c.Addr, door, e)
			case c.Refused && !strings.Contains(e.Message, c.Range):
				t.Errorf("%s (%s), %s: message does not name %q: %s", c.Name, c.Addr, door, c.Range, e.Message)
			}
			if e := AsError(check(local)); e != nil {
				t.Errorf("%s (%s), %s under trust local: %v", c.Name, c.Addr, door, e)
			}
		}
	}
}

// TestWildcardDenyOwnAddressesAtSubmission: a daemon listening on
// 0.0.0.0:PORT is refused at submission through any of the machine's
// addresses at that port, whatever the trust; another port is fine.
func TestWildcardDenyOwnAddressesAtSubmission(t *testing.T) {
	p := URLPolicy{TrustLevel: "local", DenyHosts: []string{"0.0.0.0:8765"},
		LocalAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.44")} }}
	if e := AsError(CheckURL("http://192.0.2.44:8765/mcp", p)); e == nil || e.Code != InvalidParameter {
		t.Fatalf("own address at the daemon's port: %v, want INVALID_PARAMETER", e)
	}
	if e := AsError(CheckURL("http://192.0.2.44:8766/", p)); e != nil {
		t.Fatalf("own address at another port: %v", e)
	}
}
