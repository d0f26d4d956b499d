package browser

import (
	"net/netip"
	"net/url"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestRestrictedNewRangesInChromium (issue 26 item 7): in a real Chromium
// under trust restricted, a public page's redirect and image to the ranges
// bfdb840 let through — carrier-grade NAT and NAT64 carrying loopback, by
// literal and by a name resolving there — fail the page with
// TRUST_LEVEL_NOT_ALLOWED naming the blocked URL. Nothing leaves the
// machine: PublicNet.Dial refuses any address but its fixtures'.
func TestRestrictedNewRangesInChromium(t *testing.T) {
	site := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("public.test", site.Host())
	pn.Map("cgnat.test", netip.MustParseAddr("100.64.0.1"))
	pn.Map("nat64.test", netip.MustParseAddr("64:ff9b::7f00:1"))
	m := newManager(t, Options{TrustLevel: "restricted", Resolve: pn.Resolve, Dial: pn.Dial})
	if code, _ := navigateCode(t, m, "sess_n", base+"/page/1"); code != "" {
		t.Fatalf("public page: %s", code)
	}
	port := portOf(t, site.Host())
	for _, target := range []string{
		"http://100.64.0.1:" + port + "/page/9", "http://[64:ff9b::7f00:1]:" + port + "/page/9",
		"http://cgnat.test:" + port + "/page/9", "http://nat64.test:" + port + "/page/9",
	} {
		for _, how := range []string{"/redirect?to=", "/image?src="} {
			code, details := navigateCode(t, m, "sess_n", base+how+url.QueryEscape(target))
			if code != engine.TrustLevelNotAllowed || details["blockedUrl"] != target {
				t.Errorf("%s%s: code %q details %v, want TRUST_LEVEL_NOT_ALLOWED for it", how, target, code, details)
			}
		}
	}
	if n := site.HostHits("public.test", "/page/9"); n != 0 {
		t.Fatalf("/page/9 served %d times", n)
	}
}
