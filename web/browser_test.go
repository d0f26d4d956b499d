package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// until polls a JavaScript expression in page until it returns true.
func until(t *testing.T, p *rod.Page, what, js string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		res, err := p.Eval(js)
		if err == nil && res.Value.Bool() {
			return
		}
		if time.Now().After(deadline) {
			if os.Getenv("BROWSERTASK_TEST_DUMP") != "" {
				t.Logf("page: %s", p.MustHTML())
			}
			t.Fatalf("%s: not true after %v (%s; err %v)", what, d, js, err)
		}
		time.Sleep(50 * time.Millisecond)
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

func TestDashboardInChromium(t *testing.T) {
	fixture.NeedChromium(t)
	e := newEnv(t, "", true)
	shots := t.TempDir() // screenshots of every step
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 800, 1, false)
	img := pngBase64(t)

	// A database with some history, then a run in progress.
	e.waitStatus(e.submit(map[string]any{"items": 5, "sleepMs": 5, "contentBase64": img, "mimeType": "image/png"}), engine.StatusSucceeded)
	e.waitStatus(e.submit(map[string]any{"items": 3, "sleepMs": 5, "fail": true}), engine.StatusFailed)
	stopped := e.submit(map[string]any{"items": 40, "sleepMs": 500})
	e.waitStatus(stopped, engine.StatusRunning)
	if _, err := e.eng.Cancel(ctx, stopped, "test"); err != nil {
		t.Fatal(err)
	}
	live := e.submit(map[string]any{"items": 16, "sleepMs": 250, "contentBase64": img, "mimeType": "image/png"})
	e.submit(map[string]any{"items": 30, "sleepMs": 120})

	// 1. The runs list shows the run and its progress advancing without a reload.
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	page.MustEval(`() => { window.__noReload = 42 }`)
	label := `() => { const el = document.querySelector('tr[data-run-id="` + live + `"] .bar .label'); return el ? el.textContent.trim() : "" }`
	until(t, page, "live run row", `() => { const el = document.querySelector('tr[data-run-id="`+live+`"] .bar .label'); return !!el && /^[1-9]/.test(el.textContent.trim()) }`, 10*time.Second)
	first := text(t, page, label)
	firstDone, _ := strconv.Atoi(strings.SplitN(first, "/", 2)[0])
	until(t, page, "progress advances", `() => { const el = document.querySelector('tr[data-run-id="`+live+`"] .bar .label'); return !!el && parseInt(el.textContent) > `+strconv.Itoa(firstDone)+` }`, 10*time.Second)
	second := text(t, page, label)
	if res := page.MustEval(`() => window.__noReload`); res.Int() != 42 {
		t.Fatal("the page reloaded; the list must update in place")
	}
	t.Logf("runs list progress advanced in place: %q -> %q", first, second)
	page.MustScreenshot(filepath.Join(shots, "dashboard.png"))
	saveDashboardShot(t, filepath.Join(shots, "dashboard.png"))

	// 2. Once finished, the polling stops and the detail page shows the image.
	e.waitStatus(live, engine.StatusSucceeded)
	page.MustNavigate(e.srv.URL + "/runs/" + live).MustWaitLoad()
	until(t, page, "image artifact rendered", `() => { const i = document.querySelector('.thumb img'); return !!i && i.complete && i.naturalWidth > 0 }`, 10*time.Second)
	if w := page.MustEval(`() => document.querySelector('.thumb img').naturalWidth`).Int(); w != 240 {
		t.Fatalf("image naturalWidth %d, want 240", w)
	}
	if has := page.MustEval(`() => document.getElementById('run-live').hasAttribute('hx-trigger')`).Bool(); has {
		t.Fatal("a terminal run's page still polls")
	}
	page.MustScreenshotFullPage(filepath.Join(shots, "run.png"))

	// 3. Cancel on a running run: the page shows canceled, the database too.
	victim := e.submit(map[string]any{"items": 60, "sleepMs": 1000})
	e.waitStatus(victim, engine.StatusRunning)
	page.MustNavigate(e.srv.URL + "/runs/" + victim).MustWaitLoad()
	until(t, page, "running status shown", `() => document.getElementById('run-live').dataset.status === 'running'`, 10*time.Second)
	page.MustElement("#cancel").MustClick()
	until(t, page, "canceled status shown", `() => document.getElementById('run-live').dataset.status === 'canceled' && document.getElementById('cancel').disabled`, 5*time.Second)
	r, err := e.eng.Get(ctx, victim)
	if err != nil || r.Status != engine.StatusCanceled || r.Error == nil || r.Error.Code != engine.RunCanceled {
		t.Fatalf("database after Cancel: %+v %v", r, err)
	}
	if got := text(t, page, `() => document.querySelector('#run-live .badge').textContent`); got != "canceled" {
		t.Fatalf("badge %q, want canceled", got)
	}

	// 4. The new-run form: a schema error for bad input, then a run.
	page.MustNavigate(e.srv.URL + "/runs/new?template=dev_echo").MustWaitLoad()
	page.MustEval(`() => { document.getElementById('inputs').value = '{"sleepMs": "slow"}' }`)
	wait := page.MustWaitNavigation()
	page.MustElement("#new-run button[type=submit]").MustClick()
	wait()
	until(t, page, "schema error shown", `() => { const a = document.querySelector('#new-run .alert'); return !!a && a.textContent.includes('INVALID_PARAMETER') && a.textContent.includes('inputs.sleepMs') }`, 5*time.Second)
	page.MustScreenshot(filepath.Join(shots, "new-run-error.png"))
	page.MustEval(`() => { document.getElementById('inputs').value = '{"items": 2, "sleepMs": 10}' }`)
	wait = page.MustWaitNavigation()
	page.MustElement("#new-run button[type=submit]").MustClick()
	wait()
	until(t, page, "run page after start", `() => location.pathname.startsWith('/runs/run_')`, 5*time.Second)
	started := strings.TrimPrefix(text(t, page, `() => location.pathname`), "/runs/")
	if r := e.waitStatus(started, engine.StatusSucceeded); r.TemplateID != "dev_echo" || r.Progress.DoneSteps != 2 {
		t.Fatalf("run started from the form: %+v", r)
	}
	until(t, page, "form run shown as succeeded", `() => document.getElementById('run-live').dataset.status === 'succeeded'`, 5*time.Second)

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
