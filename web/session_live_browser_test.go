package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/wire"
)

// toolsDaemon is one process as `browsertask serve` wires it (engine,
// browser, the interactive tools, /mcp and the dashboard) behind a token,
// with an MCP client connected to it.
type toolsDaemon struct {
	t     *testing.T
	proc  *wire.Process
	url   string
	token string
	cs    *sdk.ClientSession
}

// bearer adds the token to every request of the MCP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func newToolsDaemon(t *testing.T, token string) *toolsDaemon {
	t.Helper()
	p, err := wire.Open(t.Context(), wire.Options{DBPath: filepath.Join(t.TempDir(), "bt.db"), Engine: engine.DefaultConfig(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = p.Handler(ts.Listener.Addr().String(), wire.HTTPOptions{Token: token})
	ts.Start()
	t.Cleanup(ts.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &toolsDaemon{t: t, proc: p, url: ts.URL, token: token, cs: cs}
}

// tool calls a tool that must succeed and returns its structured content.
func (d *toolsDaemon) tool(name string, args map[string]any) map[string]any {
	d.t.Helper()
	res, err := d.cs.CallTool(d.t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		d.t.Fatalf("%s: %v", name, err)
	}
	sc := map[string]any{}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	if res.IsError {
		d.t.Fatalf("%s %v: %v", name, args, sc)
	}
	return sc
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ name, data string }

// openStream GETs a live stream as the dashboard's own page would and
// hands its events to the returned channel, closed when the response
// ends. It fails the test unless the stream answers 200 text/event-stream.
func (d *toolsDaemon) openStream(ctx context.Context, path string) <-chan sseEvent {
	d.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", d.url+path, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		res.Body.Close()
		d.t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if ev.data != "" {
					ev.data += "\n"
				}
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// waitJS waits until js, evaluated in p, is true (bounded by the test's
// deadline only).
func waitJS(t *testing.T, p *rod.Page, what, js string) {
	t.Helper()
	last := ""
	fixture.WaitUntil(t, what, func() bool {
		res, err := p.Eval(js)
		if err == nil && res.Value.Bool() {
			return true
		}
		// What the live view shows, each time it changes, for a failure.
		if live, err := p.Eval(`() => document.querySelector('#live')?.outerHTML.replace(/base64,[^"]*/g, 'base64,…').replace(/data-seq="\d+"/g, '') ?? 'no #live'`); err == nil && live.Value.Str() != last {
			last = live.Value.Str()
			t.Logf("waiting for %s; the live view: %s", what, last)
		}
		return false
	})
}

// liveTabJS finds the live view's panel of the tools' tab label.
func liveTabJS(label string) string {
	return `[...document.querySelectorAll('#live .live-tab')].find(f => { const l = f.querySelector('.live-label'); return l && l.textContent === ` + jsString(label) + ` })`
}

// TestSessionLiveViewInChromium: a person watches, on the session page in
// Chromium, what an agent does through the interactive tools on a daemon
// with a token. browser_navigate to a fixture page shows a live frame of
// its tab, labelled t1 as the recorded calls name it, with its URL and
// title; the view takes no input (no Take over, no address bar, not
// under control); browser_tabs open adds t2 with its own frame, and
// closing it marks it closed. A stream opened beside the page gets frame
// events; closing the session ends it ("end", then the response ends),
// the page says the session is closed with no tab left, the browser keeps
// none of its tabs or frames, and the session's page shows no live view
// any more.
func TestSessionLiveViewInChromium(t *testing.T) {
	fixture.NeedChromium(t)
	site := fixture.New(t)
	d := newToolsDaemon(t, "session-live-token")
	sid, _ := d.tool("create_browser_session", map[string]any{})["sessionId"].(string)
	if sid == "" {
		t.Fatal("create_browser_session gave no sessionId")
	}
	ticker := site.URL("/live/ticker")
	d.tool("browser_navigate", map[string]any{"sessionId": sid, "url": ticker})

	viewer := launchChromium(t).MustPage("").Context(t.Context())
	viewer.MustSetViewport(1100, 860, 1, false)
	viewer.MustNavigate(d.url + "/login?token=" + d.token).MustWaitLoad()
	viewer.MustNavigate(d.url + "/sessions/" + sid).MustWaitLoad()
	t1 := liveTabJS("t1")
	waitJS(t, viewer, "t1's URL and title", `() => { const f = `+t1+`; return !!f && f.dataset.closed === 'false' &&
		f.querySelector('.live-url').textContent === `+jsString(ticker)+` && f.querySelector('.live-title').textContent === 'Ticker' }`)
	waitJS(t, viewer, "a live frame of t1", `() => { const i = (`+t1+`)?.querySelector('.frame img.shot');
		return !!i && i.src.startsWith('data:image/jpeg;base64,') && i.src.length > 1000 }`)
	if got := text(t, viewer, `() => [document.querySelectorAll('#live .take-over, #live .live-goto').length,
		document.querySelector('#live .live-tabs').dataset.control, document.querySelector('#live .live-tab').dataset.inputUrl].join(' ')`); got != "0 false " {
		t.Errorf("watch-only view: take-over and address bars, control, input URL = %q; want \"0 false \"", got)
	}

	page2 := site.URL("/page/2")
	d.tool("browser_tabs", map[string]any{"sessionId": sid, "action": "open", "url": page2})
	t2 := liveTabJS("t2")
	waitJS(t, viewer, "t2 in the live view with its frame", `() => { const f = `+t2+`; if (!f) return false;
		const i = f.querySelector('.frame img.shot');
		return f.dataset.closed === 'false' && f.querySelector('.live-url').textContent === `+jsString(page2)+` &&
			f.querySelector('.live-title').textContent === 'Page 2' && !!i && i.src.startsWith('data:image/jpeg;base64,') }`)
	if got := text(t, viewer, `() => [...document.querySelectorAll('#live .live-tab[data-closed="false"] .live-label')].map(l => l.textContent).join(' ')`); got != "t1 t2" {
		t.Errorf("open tabs in the live view: %q; want \"t1 t2\"", got)
	}
	if os.Getenv("BROWSERTASK_SCREENSHOT_DIR") != "" {
		shot := filepath.Join(t.TempDir(), "session-live.png")
		b, err := viewer.Screenshot(true, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
		if err == nil {
			err = os.WriteFile(shot, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		saveShot(t, shot, "session-live.png")
	}
	d.tool("browser_tabs", map[string]any{"sessionId": sid, "action": "close", "tab": "t2"})
	waitJS(t, viewer, "t2 shown closed", `() => { const f = `+t2+`; return !!f && f.dataset.closed === 'true' }`)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := d.openStream(ctx, "/sessions/"+sid+"/live/stream?w=640&h=480")
	frameSeen := false
	for !frameSeen {
		ev, ok := <-events
		if !ok {
			t.Fatal("the session's stream ended before a frame")
		}
		frameSeen = strings.HasPrefix(ev.name, "frame-") && strings.HasPrefix(ev.data, `<img class="shot" src="data:image/jpeg;base64,`)
	}

	d.tool("close_browser_session", map[string]any{"sessionId": sid})
	var last, closing sseEvent
	for ev := range events {
		if ev.name == "tabs" {
			closing = ev
		}
		last = ev
	}
	if last.name != "end" || !strings.Contains(closing.data, "The session is closed") || strings.Contains(closing.data, `class="live-tab"`) {
		t.Errorf("the stream after the session closed: last event %q, last tabs %.300q; want the closed note, no tab, then end", last.name, closing.data)
	}
	waitJS(t, viewer, "the page's closed note", `() => { const l = document.querySelector('#live-tabs');
		return !!l && l.textContent.includes('The session is closed') && !l.querySelector('.live-tab') }`)
	if tabs := d.proc.Browser.LiveTabs(t.Context(), browser.LiveSessionKey(sid)); len(tabs) != 0 {
		t.Errorf("the browser still files %d tabs of the closed session: %+v", len(tabs), tabs)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", d.url+"/sessions/"+sid, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&body)
	if res.StatusCode != http.StatusOK || strings.Contains(body.String(), `id="live"`) || !strings.Contains(body.String(), "browser_tabs") {
		t.Errorf("the closed session's page: %d, live section %v; want 200 with its calls and no live view", res.StatusCode, strings.Contains(body.String(), `id="live"`))
	}
}
