package browser

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// TestRequestPolicyRanges (issue 26 item 7): the in-browser request check
// of a restricted Manager refuses every refused row of the shared table at
// request time, as a literal URL host and as a name resolving there, with
// TRUST_LEVEL_NOT_ALLOWED and details.policy "trust-restricted"; allowed
// rows pass. (The machine's-own rows need the table's own addresses, which
// a Manager reads from the interfaces: engine's TestRestrictedRangesTable
// covers them.) No browser is started.
func TestRequestPolicyRanges(t *testing.T) {
	for _, c := range netpolicytest.Cases() {
		if strings.Contains(c.Range, "this machine") {
			continue
		}
		m := NewManager(Options{TempDir: t.TempDir(), TrustLevel: "restricted",
			Resolve: func(string) ([]netip.Addr, error) { return []netip.Addr{c.Addr}, nil }})
		host := c.Addr.String()
		if c.Addr.Is6() {
			host = "[" + host + "]"
		}
		for _, u := range []string{"http://" + host + "/x.js", "https://target.test/x.js"} {
			e := m.policy.check(u)
			switch {
			case !c.Refused && e != nil:
				t.Errorf("%s: %s refused: %v", c.Name, u, e)
			case c.Refused && (e == nil || e.Code != engine.TrustLevelNotAllowed || e.Details["policy"] != "trust-restricted"):
				t.Errorf("%s: %s = %v, want TRUST_LEVEL_NOT_ALLOWED (trust-restricted)", c.Name, u, e)
			}
		}
		_ = m.Close()
	}
}
