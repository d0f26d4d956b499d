package web_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// saveDashboardShot copies the runs-list screenshot to
// $BROWSERTASK_SCREENSHOT_DIR when set (how docs/dashboard.png is refreshed).
func saveDashboardShot(t *testing.T, src string) { saveShot(t, src, "dashboard.png") }

// saveShot copies a screenshot to $BROWSERTASK_SCREENSHOT_DIR/name when
// that is set (how the README's screenshots in docs/ are refreshed).
func saveShot(t *testing.T, src, name string) {
	d := os.Getenv("BROWSERTASK_SCREENSHOT_DIR")
	if d == "" {
		return
	}
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(filepath.Join(d, name), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// launchChromium starts /usr/bin/chromium headless with a fresh profile
// (killed and removed at cleanup) and connects rod to it.
func launchChromium(t *testing.T) *rod.Browser {
	t.Helper()
	l := launcher.New().Bin("/usr/bin/chromium").Leakless(false).Headless(true).
		UserDataDir(t.TempDir()).Set("no-sandbox").Set("disable-gpu").
		Set("disable-background-networking").Set("disable-component-update").
		Set("disable-sync").Set("no-first-run")
	u, err := l.Launch()
	if err != nil {
		t.Fatalf("launch chromium: %v", err)
	}
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		l.Kill()
		t.Fatalf("connect to chromium: %v", err)
	}
	t.Cleanup(func() {
		_ = b.Close()
		l.Kill()
	})
	return b
}

// until polls a JavaScript expression in page until it returns true,
// with no time bound of its own (fixture.WaitUntil: how long a page takes
// to show something is not what these tests promise; a condition that
// never holds fails shortly before the test binary's deadline). A page
// whose context ended fails at once.
func until(t *testing.T, p *rod.Page, what, js string) {
	t.Helper()
	var lastErr error
	fixture.WaitUntil(t, what, func() bool {
		if err := p.GetContext().Err(); err != nil {
			t.Fatalf("%s: the page's context ended (%v) before %s", what, err, js)
		}
		res, err := p.Eval(js)
		lastErr = err
		if err == nil && res.Value.Bool() {
			return true
		}
		return false
	})
	if lastErr != nil && os.Getenv("BROWSERTASK_TEST_DUMP") != "" {
		t.Logf("last evaluation error: %v", lastErr)
	}
}

// text evaluates a JavaScript expression to a string.
func text(t *testing.T, p *rod.Page, js string) string {
	t.Helper()
	res, err := p.Eval(js)
	if err != nil {
		t.Fatalf("eval %s: %v", js, err)
	}
	return res.Value.Str()
}

// shopHost is the name the fixture answers to in the dashboard's README
// screenshot: Chromium maps it, port 80, to the fixture on loopback
// (host resolver rules), so the runs list shows real templates working on
// http://shop.example/….
const shopHost = "shop.example"

// TestDashboardInChromium drives the dashboard in Chromium over the real
// templates on the fixture shop: a history of batch_extract_pages,
// screenshot_pages, run_steps (a checkout), crawl_site, a partial and a
// canceled run, and a batch in progress. The runs list shows them with
// what each works on and the live run's progress advancing in place (the
// README's screenshot, docs/dashboard.png); the screenshot run's page
// shows its images and stops polling once it is finished; the new-run
// form answers bad inputs with the schema error and starts a run; a
// narrow window stays usable.
func TestDashboardInChromium(t *testing.T) {
	site := fixture.New(t)
	_, port, err := net.SplitHostPort(site.Host())
	if err != nil {
		t.Fatal(err)
	}
	e := newLiveEnvWith(t, liveOptions{ChromiumArgs: []string{"--host-resolver-rules=MAP " + shopHost + ":80 127.0.0.1:" + port}})
	shop := func(path string) string { return "http://" + shopHost + path }
	shots := t.TempDir() // screenshots of every step
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 800, 1, false)

	// A history on the shop, one run after another, then a batch in
	// progress.
	products := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, shop(fmt.Sprintf("/page/%d", i)))
		}
		return out
	}
	fields := map[string]any{"name": "#name", "price": ".price"}
	finish := func(id string, want engine.RunStatus) *engine.Run {
		t.Helper()
		r := e.waitRun(id)
		if r.Status != want {
			t.Fatalf("%s run %s: %s %+v, want %s", r.TemplateID, id, r.Status, r.Error, want)
		}
		return r
	}
	finish(e.submit("batch_extract_pages", map[string]any{"urls": products(1, 24), "fields": fields}), engine.StatusSucceeded)
	shotsRun := e.submit("screenshot_pages", map[string]any{"urls": []string{shop("/shop/cart"), shop("/page/1"), shop("/page/2")},
		"viewport": map[string]int{"width": 1000, "height": 640}})
	finish(shotsRun, engine.StatusSucceeded)
	checkout := finish(e.submitSteps(map[string]any{"startUrl": shop("/shop/cart"), "steps": []map[string]any{
		{"action": "type", "selector": "#note", "text": "Leave it at the door"},
		{"action": "click", "selector": "#place-order"},
		{"action": "wait_for", "selector": "#order"},
		{"action": "extract", "name": "order", "selector": "#order"},
		{"action": "screenshot", "name": "order-placed"},
	}}), engine.StatusSucceeded)
	if !strings.Contains(string(checkout.Result), "Order placed #1") {
		t.Fatalf("checkout result %s", checkout.Result)
	}
	finish(e.submit("screenshot_pages", map[string]any{"urls": []string{shop("/page/7"), shop("/status/404")}}), engine.StatusPartialSuccess)
	finish(e.submit("crawl_site", map[string]any{"startUrl": shop("/crawl/0"), "maxPages": 20}), engine.StatusSucceeded)
	var slow []string
	for i := 1; i <= 8; i++ {
		slow = append(slow, shop(fmt.Sprintf("/slow?ms=1500&item=%d", i)))
	}
	stopped := e.submit("batch_extract_pages", map[string]any{"urls": slow, "concurrency": 1})
	e.waitStatus(stopped, engine.StatusRunning)
	if _, err := e.eng.Cancel(ctx, stopped, "test"); err != nil {
		t.Fatal(err)
	}
	// Each page waits for the network to be idle (500 ms after load):
	// two tabs take about 15 s for the 48 pages.
	live := e.submit("batch_extract_pages", map[string]any{"urls": products(1, 48), "fields": fields, "concurrency": 2, "waitFor": "networkidle"})

	// 1. The runs list shows the runs, what each works on, and the live
	// run's progress advancing without a reload.
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	page.MustEval(`() => { window.__noReload = 42 }`)
	label := `() => { const el = document.querySelector('tr[data-run-id="` + live + `"] .bar .label'); return el ? el.textContent.trim() : "" }`
	until(t, page, "live run row", `() => { const el = document.querySelector('tr[data-run-id="`+live+`"] .bar .label'); return !!el && /^[1-9]/.test(el.textContent.trim()) }`)
	first := text(t, page, label)
	firstDone, _ := strconv.Atoi(strings.SplitN(first, "/", 2)[0])
	until(t, page, "progress advances", `() => { const el = document.querySelector('tr[data-run-id="`+live+`"] .bar .label'); return !!el && parseInt(el.textContent) > `+strconv.Itoa(firstDone)+` }`)
	second := text(t, page, label)
	if res := page.MustEval(`() => window.__noReload`); res.Int() != 42 {
		t.Fatal("the page reloaded; the list must update in place")
	}
	t.Logf("runs list progress advanced in place: %q -> %q", first, second)
	var rows []struct{ Template, Status, Summary string }
	jsonOf(t, page, `() => [...document.querySelectorAll('#runs tbody tr')].map(tr => ({Template: tr.querySelector('.run-what a').textContent,
		Status: tr.querySelector('.badge').dataset.status, Summary: (tr.querySelector('.summary') || {}).textContent || ''}))`, &rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Template+" "+r.Status+": "+r.Summary)
	}
	want := []string{
		"batch_extract_pages running: http://shop.example/page/1 and 47 more",
		"batch_extract_pages canceled: http://shop.example/slow?ms=1500&item=1 and 7 more",
		"crawl_site succeeded: from http://shop.example/crawl/0, up to 20 pages",
		"screenshot_pages partial_success: http://shop.example/page/7 and 1 more",
		"run_steps succeeded: 5 steps from http://shop.example/shop/cart",
		"screenshot_pages succeeded: http://shop.example/shop/cart and 2 more",
		"batch_extract_pages succeeded: http://shop.example/page/1 and 23 more",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("runs list:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	page.MustScreenshot(filepath.Join(shots, "dashboard.png"))
	saveDashboardShot(t, filepath.Join(shots, "dashboard.png"))

	// 2. The screenshot run's page shows its images (1000 px wide, the
	// viewport) and, finished, does not poll.
	page.MustNavigate(e.srv.URL + "/runs/" + shotsRun).MustWaitLoad()
	until(t, page, "image artifacts rendered", `() => { const i = [...document.querySelectorAll('.thumb img')]; return i.length === 3 && i.every(x => x.complete && x.naturalWidth === 1000) }`)
	if has := page.MustEval(`() => document.getElementById('run-live').hasAttribute('hx-trigger')`).Bool(); has {
		t.Fatal("a terminal run's page still polls")
	}
	page.MustScreenshotFullPage(filepath.Join(shots, "run.png"))
	finish(live, engine.StatusSucceeded)

	// 3. The new-run form: a schema error for bad input, then a run.
	page.MustNavigate(e.srv.URL + "/runs/new?template=dev_echo").MustWaitLoad()
	page.MustEval(`() => { document.getElementById('inputs').value = '{"sleepMs": "slow"}' }`)
	wait := page.MustWaitNavigation()
	page.MustElement("#new-run button[type=submit]").MustClick()
	wait()
	until(t, page, "schema error shown", `() => { const a = document.querySelector('#new-run .alert'); return !!a && a.textContent.includes('INVALID_PARAMETER') && a.textContent.includes('inputs.sleepMs') }`)
	page.MustScreenshot(filepath.Join(shots, "new-run-error.png"))
	page.MustEval(`() => { document.getElementById('inputs').value = '{"items": 2, "sleepMs": 10}' }`)
	wait = page.MustWaitNavigation()
	page.MustElement("#new-run button[type=submit]").MustClick()
	wait()
	until(t, page, "run page after start", `() => location.pathname.startsWith('/runs/run_')`)
	started := strings.TrimPrefix(text(t, page, `() => location.pathname`), "/runs/")
	if r := finish(started, engine.StatusSucceeded); r.TemplateID != "dev_echo" || r.Progress.DoneSteps != 2 {
		t.Fatalf("run started from the form: %+v", r)
	}
	until(t, page, "form run shown as succeeded", `() => document.getElementById('run-live').dataset.status === 'succeeded'`)

	// A narrow window stays usable: nothing wider than the viewport but
	// the table's own scroller.
	page.MustSetViewport(420, 860, 1, false)
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	if wide := page.MustEval(`() => document.documentElement.scrollWidth > window.innerWidth + 1`).Bool(); wide {
		t.Fatal("the runs page scrolls sideways at 420 px")
	}
	page.MustScreenshot(filepath.Join(shots, "dashboard-narrow.png"))
	for _, p := range []string{"/templates", "/profile", "/sessions"} {
		page.MustNavigate(e.srv.URL + p).MustWaitLoad()
		if h := text(t, page, `() => document.querySelector('h1').textContent`); h == "" {
			t.Fatalf("%s: no heading", p)
		}
	}
	t.Logf("screenshots in %s", shots)
}
