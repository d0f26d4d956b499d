package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/templates"
	"github.com/browsertask/browsertask/web"
)

// liveEnv is a dashboard over an engine with the real templates (and
// dev_echo, dev_tool_job) and a browser manager (its Chromium runs the
// runs; the dashboard shows them live), on a real listener whose URL is
// the engine's live base.
type liveEnv struct {
	t   *testing.T
	eng *engine.Engine
	bm  *browser.Manager
	srv *httptest.Server
	db  string // the SQLite file (its -wal and -shm beside it)
}

// liveOptions vary newLiveEnvWith.
type liveOptions struct {
	Token string
	// Stopped leaves the engine unstarted: submitted runs stay queued.
	Stopped bool
	// ChromiumArgs are added to the run browser's command line (host
	// resolver rules that give a fixture a real-looking name).
	ChromiumArgs []string
	// Log receives every process log line at debug level (none when nil).
	Log io.Writer
}

func newLiveEnv(t *testing.T, token string) *liveEnv {
	t.Helper()
	return newLiveEnvWith(t, liveOptions{Token: token})
}

func newLiveEnvWith(t *testing.T, o liveOptions) *liveEnv {
	t.Helper()
	token := o.Token
	fixture.NeedChromium(t)
	path := filepath.Join(t.TempDir(), "bt.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	log := fixture.Logger(t)
	if o.Log != nil {
		log = slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	bm := browser.NewManager(browser.Options{TempDir: t.TempDir(), Logger: log, ExtraArgs: o.ChromiumArgs})
	tpls := append(templates.All(bm, nil), devtpl.ToolJob{}, devtpl.Echo{})
	eng, err := engine.New(engine.Options{Store: store, Templates: tpls, Browser: bm,
		Config: engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond},
		Logger: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var dash *web.Dashboard
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { dash.ServeHTTP(w, r) }))
	dash = web.New(web.Options{Engine: eng, Live: bm, Token: token, DBPath: path, Version: "test", Logger: log})
	eng.SetLiveBase(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if o.Stopped {
		close(done)
	} else {
		go func() { _ = eng.Run(ctx); close(done) }()
	}
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		_ = bm.Close()
		store.Close()
	})
	return &liveEnv{t: t, eng: eng, bm: bm, srv: srv, db: path}
}

// submitSteps starts a run_steps run.
func (e *liveEnv) submitSteps(inputs map[string]any) string {
	e.t.Helper()
	return e.submit("run_steps", inputs)
}

// submit starts a run of a template.
func (e *liveEnv) submit(templateID string, inputs map[string]any) string {
	e.t.Helper()
	b, _ := json.Marshal(inputs)
	res, err := e.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: templateID, Inputs: b, Mode: engine.ModeAsync,
		TimeoutMs: 120000})
	if err != nil {
		e.t.Fatalf("submit %s: %v", templateID, err)
	}
	return res.Run.RunID
}

// waitRun waits until the run is terminal and returns it.
func (e *liveEnv) waitRun(id string) *engine.Run {
	e.t.Helper()
	ctx, cancel := fixture.Context(e.t)
	defer cancel()
	r, err := e.eng.Wait(ctx, id, nil)
	if err != nil {
		e.t.Fatalf("run %s: %v", id, err)
	}
	return r
}

// waitStatus polls the engine until the run has status; a run that ends
// with another status fails at once.
func (e *liveEnv) waitStatus(id string, want engine.RunStatus) {
	e.t.Helper()
	fixture.WaitUntil(e.t, "run "+id+" to be "+string(want), func() bool {
		r, err := e.eng.Get(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.Status != want && r.Status.Terminal() {
			e.t.Fatalf("run %s is %s, want %s", id, r.Status, want)
		}
		return r.Status == want
	})
}

// frameSrc is the live view's first frame image source.
const frameSrc = `() => { const i = document.querySelector('#live .live-tab[data-closed="false"] .frame img.shot'); return i ? i.src : '' }`

// TestLiveViewInChromium: a run_steps run on a page that keeps changing
// shows, on its run page, a live frame with the tab's URL and title; the
// frame changes as the page changes (two frames' bytes differ) and keeps
// changing across the run page's live refreshes; once the run is over (the
// test cancels it: the ticker would go on for minutes, so a slow machine
// cannot see the run end before its first frame) the tab shows as closed
// with its last frame. The screenshot of the live
// view goes to $BROWSERTASK_SCREENSHOT_DIR/live.png (docs/live.png).
func TestLiveViewInChromium(t *testing.T) {
	e := newLiveEnv(t, "")
	site := fixture.New(t)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1100, 860, 1, false)

	ticker := site.URL("/live/ticker?until=2000")
	id := e.submitSteps(map[string]any{"startUrl": ticker, "viewport": map[string]int{"width": 1000, "height": 640},
		"steps": []map[string]any{{"action": "wait_for", "selector": "#done", "timeoutMs": 60000}, {"action": "extract", "name": "tick", "selector": "#tick"}}})
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	page.MustEval(`() => { window.__swaps = 0; document.body.addEventListener('htmx:afterSwap', e => { if (e.target.id === 'run-live') window.__swaps++ }) }`)
	until(t, page, "a live frame", `() => (`+frameSrc+`)() !== ""`)
	// The tab's title arrives with its document; the panel is resent when
	// it changes.
	until(t, page, "the tab's URL and title", `() => { const tab = document.querySelector('#live .live-tab');
		return !!tab && tab.querySelector('.live-url').textContent === `+jsString(ticker)+` && tab.querySelector('.live-title').textContent === 'Ticker' }`)
	first := text(t, page, frameSrc)
	until(t, page, "a different frame", `() => { const s = (`+frameSrc+`)(); return s !== '' && s !== `+jsString(first)+` }`)
	second := text(t, page, frameSrc)
	if first == second || len(first) < 100 || first[:23] != "data:image/jpeg;base64," {
		t.Fatalf("frames: first %d bytes, second %d bytes, equal %v", len(first), len(second), first == second)
	}
	// The run page refreshes its live region every second; the stream
	// must outlive the refreshes.
	until(t, page, "two refreshes", `() => window.__swaps >= 2`)
	afterSwaps := text(t, page, frameSrc)
	until(t, page, "a new frame after the refreshes", `() => { const s = (`+frameSrc+`)(); return s !== '' && s !== `+jsString(afterSwaps)+` }`)
	shot := filepath.Join(t.TempDir(), "live.png")
	b, err := page.Screenshot(false, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, b, 0o644); err != nil {
		t.Fatal(err)
	}
	saveShot(t, shot, "live.png")

	if _, err := e.eng.Cancel(ctx, id, "the test has seen the live view"); err != nil {
		t.Fatal(err)
	}
	run := e.waitRun(id)
	if run.Status != engine.StatusCanceled {
		t.Fatalf("run %s: %+v", run.Status, run.Error)
	}
	until(t, page, "the closed tab's still", `() => !!document.querySelector('#live .live-tab[data-closed="true"] .frame img.shot')`)
}

// TestTakeoverInChromium: a run_steps run stops at takeover on the human
// check (a button that counts only a real pointer sequence: automation's
// own click is refused); the test, as the person, opens the run page in
// Chromium, moves the mouse over the button in the live view and clicks
// it, then presses Done; the run goes on and succeeds with the page that
// only a verified person reaches.
func TestTakeoverInChromium(t *testing.T) {
	e := newLiveEnv(t, "")
	site := fixture.New(t)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 1100, 1, false)

	const vw, vh = 1000, 640
	id := e.submitSteps(map[string]any{"startUrl": site.URL("/human-check"), "viewport": map[string]int{"width": vw, "height": vh},
		"steps": []map[string]any{
			{"action": "takeover", "message": "Prove you are a person: click I am human, then press Done"},
			{"action": "wait_for", "selector": "#verified", "timeoutMs": 2000},
			{"action": "navigate", "url": site.URL("/human-check/next")},
			{"action": "extract", "name": "welcome", "selector": "#welcome"},
		}})
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	until(t, page, "the takeover question", `() => !!document.querySelector('#run-ask .question[data-kind="takeover"] #takeover-done')`)
	run, err := e.eng.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if q := run.Question; q == nil || q.Kind != engine.QuestionTakeover || q.URL != e.srv.URL+"/runs/"+id+"#live" {
		t.Fatalf("inputRequest %+v, want kind takeover with the live view URL", q)
	}
	// The address bar a takeover shows sits above the frame: wait for it
	// too, so the frame is where it stays before its position is read.
	until(t, page, "the live frame in control mode", `() => document.querySelector('#live .live-tabs').dataset.control === 'true' && !!document.querySelector('#live .live-goto-url') && (`+frameSrc+`)() !== ''`)

	// Where the button is on the frame image, from the fixture's layout.
	res, err := page.Eval(`() => { const r = document.querySelector('#live .live-tab .frame img.shot').getBoundingClientRect(); return [r.x, r.y, r.width, r.height] }`)
	if err != nil {
		t.Fatal(err)
	}
	box := res.Value.Arr()
	x0, y0, w, h := box[0].Num(), box[1].Num(), box[2].Num(), box[3].Num()
	at := func(cssX, cssY float64) proto.Point { return proto.Point{X: x0 + cssX/vw*w, Y: y0 + cssY/vh*h} }
	cx := float64(fixture.HumanButtonLeft + fixture.HumanButtonWidth/2)
	cy := float64(fixture.HumanButtonTop + fixture.HumanButtonHeight/2)
	if err := page.Mouse.MoveTo(at(cx-120, cy-20)); err != nil {
		t.Fatal(err)
	}
	if err := page.Mouse.MoveLinear(at(cx, cy), 8); err != nil {
		t.Fatal(err)
	}
	if err := page.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	// The person sees the page verify them in the live view's frames;
	// the test waits until its input reached the server.
	until(t, page, "the input sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
	if got := text(t, page, `() => { const e = document.querySelector('#live .live-error'); return e ? e.textContent : '' }`); got != "" {
		t.Fatalf("input refused: %s", got)
	}
	pressDone(t, page)

	run = e.waitRun(id)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("run %s: %+v", run.Status, run.Error)
	}
	var out struct {
		Values map[string]any `json:"values"`
	}
	if err := json.Unmarshal(run.Result, &out); err != nil || out.Values["welcome"] != "Welcome, person" {
		t.Fatalf("result %s (%v), want values.welcome \"Welcome, person\"", run.Result, err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
