package browser

import (
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCrossSiteFramesDoNotCrash: a page on 127.0.0.1 framing localhost
// (another site, so Chromium puts the frame in its own process and
// auto-attaches it as a child target), nested two levels deep, loads and
// every frame is fetched. Child targets used to be built with rod's
// PageFromSession, whose Page panics on its first helper call: the whole
// process died on the first cross-site iframe.
func TestCrossSiteFramesDoNotCrash(t *testing.T) {
	site := fixture.New(t)
	port := site.Host()[strings.LastIndexByte(site.Host(), ':')+1:]
	m := newManager(t, Options{})
	inner := "http://localhost:" + port + "/page/7"
	// 127.0.0.1 → localhost → 127.0.0.1 again (a grandchild target).
	nested := "http://localhost:" + port + "/frame?src=" + site.URL("/page/8")
	for name, u := range map[string]string{
		"cross-site frame": site.URL("/frame?src=" + inner),
		"nested frames":    site.URL("/frame?src=" + nested),
	} {
		for i := 0; i < 3; i++ { // reused tabs adopt new children each time
			if code, details := navigateCode(t, m, "sess_xframe", u); code != "" {
				t.Fatalf("%s: code %q details %v", name, code, details)
			}
		}
	}
	if n := site.Hits("/page/7"); n != 3 {
		t.Errorf("cross-site frame fetched %d times, want 3", n)
	}
	if n := site.Hits("/page/8"); n != 3 {
		t.Errorf("nested frame fetched %d times, want 3", n)
	}
}
