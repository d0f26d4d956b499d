package browser

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/internal/fixture"
)

// settled is the wait condition of the /assets pages: set once their
// media and web font loaded or failed.
const settled = "html[data-settled]"

// assetHits counts the requests page n's sub-resources of type kind got,
// addressed to host ("" = any host).
func assetHits(site *fixture.Server, host string, n int, kind string) int {
	total := 0
	for _, p := range fixture.AssetPaths(n)[kind] {
		if host == "" {
			total += site.Hits(p)
		} else {
			total += site.HostHits(host, p)
		}
	}
	return total
}

// loadAssets loads /assets/page/n in tb until it settles and checks that
// the page itself loaded unchanged: status 200, final URL the page's own,
// no refusal recorded.
func loadAssets(t *testing.T, tb *Tab, site *fixture.Server, n int) {
	t.Helper()
	u := site.URL("/assets/page/" + strconv.Itoa(n))
	res, err := tb.Navigate(testCtx(t), u, settled)
	if err != nil {
		t.Fatalf("page %d: %v", n, err)
	}
	if res.Status != 200 || res.FinalURL != u {
		t.Fatalf("page %d: status %d final URL %q, want 200 %q", n, res.Status, res.FinalURL, u)
	}
	if b := tb.Blocked(); b != nil {
		t.Fatalf("page %d: a blocked resource was recorded as a refusal: %v", n, b)
	}
}

// TestBlockResourcesPerHolder: with nothing blocked and a policy that
// pauses nothing (trust local, no deny list) no request of the tab is
// paused at all and every sub-resource is fetched; blocking images, fonts
// and media keeps exactly those requests off the network (the stylesheet
// still loads) without failing the page; an empty list turns it off again;
// and a tab released with blocking on comes back to its next holder with
// nothing blocked.
func TestBlockResourcesPerHolder(t *testing.T) {
	site := fixture.New(t)
	m := newManager(t, Options{})
	if pats := m.fetchPatterns(); len(pats) != 0 {
		t.Fatalf("the policy pauses %d patterns; this test needs none", len(pats))
	}
	tb := testTab(t, m, "sess_block")
	ctx := testCtx(t)

	loadAssets(t, tb, site, 1)
	if n := tb.t.paused.Load(); n != 0 {
		t.Errorf("nothing blocked: %d requests were paused, want 0 (interception must stay off)", n)
	}
	for _, kind := range []string{"image", "font", "media", "stylesheet"} {
		if want := len(fixture.AssetPaths(1)[kind]); assetHits(site, "", 1, kind) < want {
			t.Errorf("nothing blocked: %s requests %d, want at least %d", kind, assetHits(site, "", 1, kind), want)
		}
	}

	if err := tb.BlockResources(ctx, []string{ResourceImage, ResourceFont, ResourceMedia}); err != nil {
		t.Fatal(err)
	}
	loadAssets(t, tb, site, 2)
	for _, kind := range []string{"image", "font", "media"} {
		if n := assetHits(site, "", 2, kind); n != 0 {
			t.Errorf("%s blocked: the server got %d %s requests", kind, n, kind)
		}
	}
	if n := assetHits(site, "", 2, "stylesheet"); n != 1 {
		t.Errorf("stylesheet not blocked: %d requests, want 1", n)
	}
	// Every blocked request was paused and failed, and nothing else was.
	blocked := len(fixture.AssetPaths(2)["image"]) + len(fixture.AssetPaths(2)["font"]) + len(fixture.AssetPaths(2)["media"])
	if n := tb.t.paused.Load(); n != int64(blocked) {
		t.Errorf("blocking: %d requests paused, want the %d blocked ones", n, blocked)
	}

	if err := tb.BlockResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	before := tb.t.paused.Load()
	loadAssets(t, tb, site, 3)
	if n := tb.t.paused.Load() - before; n != 0 {
		t.Errorf("blocking turned off: %d requests paused, want 0", n)
	}
	if n := assetHits(site, "", 3, "image"); n != len(fixture.AssetPaths(3)["image"]) {
		t.Errorf("blocking turned off: %d image requests, want %d", n, len(fixture.AssetPaths(3)["image"]))
	}

	// The next holder of the same tab starts with nothing blocked.
	if err := tb.BlockResources(ctx, []string{ResourceImage}); err != nil {
		t.Fatal(err)
	}
	first := tb.t
	tb.Release(true)
	// Release pools the tab in the background; take it once it is back.
	waitReleased(t, tb.s)
	tb2 := testTab(t, m, "sess_block")
	defer tb2.Release(true)
	if tb2.t != first {
		t.Fatal("the released tab was not reused")
	}
	before = tb2.t.paused.Load()
	loadAssets(t, tb2, site, 4)
	if n := assetHits(site, "", 4, "image"); n != len(fixture.AssetPaths(4)["image"]) {
		t.Errorf("next holder: %d image requests, want %d (the previous holder's blocking must not carry over)", n, len(fixture.AssetPaths(4)["image"]))
	}
	if n := tb2.t.paused.Load() - before; n != 0 {
		t.Errorf("next holder: %d requests paused, want 0", n)
	}

	if err := tb2.BlockResources(ctx, []string{"images"}); err == nil || !strings.Contains(err.Error(), `"images"`) {
		t.Errorf("unknown type: error %v, want one naming \"images\"", err)
	}
}

// TestBlockResourcesCrossSiteFrame: a cross-site iframe (another site, so
// Chromium loads it in its own process and it is auto-attached as a child
// target) gets the tab's blocking: its images never reach the server while
// its stylesheet does; with nothing blocked the same frame fetches them.
func TestBlockResourcesCrossSiteFrame(t *testing.T) {
	site := fixture.New(t)
	port := site.Host()[strings.LastIndexByte(site.Host(), ':')+1:]
	m := newManager(t, Options{})
	tb := testTab(t, m, "sess_block_frame")
	defer tb.Release(true)
	ctx := testCtx(t)
	frame := func(n int) {
		t.Helper()
		inner := "http://localhost:" + port + "/assets/page/" + strconv.Itoa(n)
		if _, err := tb.Navigate(testCtx(t), site.URL("/frame?src="+url.QueryEscape(inner)), WaitLoad); err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		if site.HostHits("localhost", "/assets/page/"+strconv.Itoa(n)) != 1 {
			t.Fatalf("frame %d: the cross-site frame was not loaded", n)
		}
		if !outOfProcess(ctx, tb, inner) {
			t.Fatalf("frame %d: %s is not an out-of-process frame; the test needs one", n, inner)
		}
	}

	if err := tb.BlockResources(ctx, []string{ResourceImage}); err != nil {
		t.Fatal(err)
	}
	frame(1)
	if n := assetHits(site, "localhost", 1, "image"); n != 0 {
		t.Errorf("images blocked: the cross-site frame's images were fetched %d times", n)
	}
	if n := assetHits(site, "localhost", 1, "stylesheet"); n != 1 {
		t.Errorf("the cross-site frame's stylesheet: %d requests, want 1", n)
	}
	if n, want := tb.t.paused.Load(), int64(len(fixture.AssetPaths(1)["image"])); n != want {
		t.Errorf("%d requests paused, want the frame's %d images", n, want)
	}

	if err := tb.BlockResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	frame(2)
	if n, want := assetHits(site, "localhost", 2, "image"), len(fixture.AssetPaths(2)["image"]); n != want {
		t.Errorf("nothing blocked: the cross-site frame's images were fetched %d times, want %d", n, want)
	}
}

// outOfProcess reports whether the browser has an iframe target (an
// out-of-process frame) loading u.
func outOfProcess(ctx context.Context, tb *Tab, u string) bool {
	res, err := proto.TargetGetTargets{}.Call(tb.s.b.Context(ctx))
	if err != nil {
		return false
	}
	for _, ti := range res.TargetInfos {
		if ti.Type == "iframe" && ti.URL == u {
			return true
		}
	}
	return false
}

// TestExportStateContactsNoOrigin: reading an origin's localStorage loads
// an empty page of that origin answered by the interception itself, also
// when nothing else of the tab is intercepted (trust local, no deny list,
// nothing blocked): the origin's server sees no request for it.
func TestExportStateContactsNoOrigin(t *testing.T) {
	site := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	if err := m.OpenSession(ctx, "sess_export", nil); err != nil {
		t.Fatal(err)
	}
	tb := testTab(t, m, "sess_export")
	if _, err := tb.Navigate(ctx, site.URL("/page/1"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Eval(ctx, `localStorage.setItem('k', 'v')`); err != nil {
		t.Fatal(err)
	}
	tb.Release(true)
	// The browser's own favicon fetches are not the page's requests (and
	// one of /page/1's may land late): they are left out of the count.
	others := func() int { return site.TotalHits() - site.Hits("/favicon.ico") }
	before := others()
	raw, err := m.ExportSession(ctx, "sess_export")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"k"`) {
		t.Errorf("exported state lacks the localStorage entry: %s", raw)
	}
	if n := others() - before; n != 0 || site.Hits("/") != 0 {
		t.Errorf("exporting the state sent %d requests to the origin (%d for /), want 0", n, site.Hits("/"))
	}
}
