package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// Chromium-driven tests of the dashboard's everyday details: artifacts
// named and ordered after their items, Cancel that asks, finished runs
// that say how long they ran, the runs list's input summaries, filters
// and favicon, and what a running run is doing right now.

// jsonOf evaluates a JavaScript expression to JSON and decodes it into v.
func jsonOf(t *testing.T, p *rod.Page, js string, v any) {
	t.Helper()
	s := text(t, p, `() => JSON.stringify((`+js+`)())`)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %s: %v (%s)", js, err, s)
	}
}

// shot saves a screenshot of the page under dir.
func shot(t *testing.T, p *rod.Page, dir, name string) {
	t.Helper()
	p.MustScreenshotFullPage(filepath.Join(dir, name))
}

// noScriptPage opens a tab with JavaScript off, as a browser without it.
func noScriptPage(t *testing.T, b *rod.Browser, ctx context.Context) *rod.Page {
	t.Helper()
	p := b.MustPage("").Context(ctx)
	if err := (proto.EmulationSetScriptExecutionDisabled{Value: true}).Call(p); err != nil {
		t.Fatal(err)
	}
	p.MustSetViewport(1280, 900, 1, false)
	return p
}

// clickAndAnswer clicks selector, which opens a confirm dialog, answers it
// (accept or dismiss) and returns the dialog's message. The click is the
// element's own, right after a live refresh settled (or after 1.5 s
// without one): a mouse click may land while the refresh swaps the
// button (down on the old one, up on the new: no click), and a button
// swapped in but not yet processed by htmx submits its plain form (the
// confirmation page) instead of asking.
func clickAndAnswer(t *testing.T, p *rod.Page, selector string, accept bool) string {
	t.Helper()
	wait, handle := p.HandleDialog()
	got := make(chan string, 1)
	go func() {
		e := wait()
		_ = handle(&proto.PageHandleJavaScriptDialog{Accept: accept})
		got <- string(e.Type) + ": " + e.Message
	}()
	if _, err := p.Eval(`s => new Promise(done => {
		const click = () => { clearTimeout(timer); setTimeout(() => { document.querySelector(s).click(); done() }, 0) };
		const timer = setTimeout(() => { document.body.removeEventListener('htmx:afterSettle', click); click() }, 1500);
		document.body.addEventListener('htmx:afterSettle', click, {once: true});
	})`, selector); err != nil {
		t.Fatalf("click %s: %v", selector, err)
	}
	select {
	case m := <-got:
		return m
	case <-p.GetContext().Done():
		t.Fatalf("clicking %s opened no dialog", selector)
		return ""
	}
}

// TestArtifactsNamedAndOrderedInChromium (issue 14 item 4): a
// screenshot_pages run of four pages, one with a very long URL, taken by
// three tabs at once: the artifacts are named after their pages, the run
// page shows them in the order of the items whatever order they were
// taken in, each card names its item's URL and links to the item's row,
// each row links to its artifact, and the long name wraps inside its card
// with the full name on hover.
func TestArtifactsNamedAndOrderedInChromium(t *testing.T) {
	e := newLiveEnv(t, "")
	site := fixture.New(t)
	shots := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)

	long := "/page/2?campaign=" + strings.Repeat("spring-sale-newsletter-", 6)
	urls := []string{site.URL("/page/3"), site.URL("/static/fields.html"), site.URL(long), site.URL("/page/1")}
	id := e.submit("screenshot_pages", map[string]any{"urls": urls, "concurrency": 3, "viewport": map[string]int{"width": 640, "height": 400}})
	run := e.waitRun(id)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("run %s: %+v", run.Status, run.Error)
	}
	var res struct {
		Screenshots []struct {
			URL        string `json:"url"`
			ArtifactID string `json:"artifactId"`
		} `json:"screenshots"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil || len(res.Screenshots) != 4 {
		t.Fatalf("result %s: %v", run.Result, err)
	}
	longName := "127.0.0.1-page-2-campaign-" + strings.Repeat("spring-sale-newsletter-", 6)
	longName = strings.Trim(longName[:80], "-.") + ".png"
	wantNames := []string{"127.0.0.1-page-3.png", "127.0.0.1-static-fields.html.png", longName, "127.0.0.1-page-1.png"}
	var wantIDs []string
	for i, s := range res.Screenshots {
		a, err := e.eng.Artifact(ctx, s.ArtifactID)
		if err != nil || a.Name != wantNames[i] {
			t.Fatalf("screenshot %d (%s): artifact %+v %v, want name %q", i, s.URL, a, err, wantNames[i])
		}
		wantIDs = append(wantIDs, s.ArtifactID)
	}

	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	until(t, page, "four thumbnails loaded", `() => { const i = [...document.querySelectorAll('.thumb img')]; return i.length === 4 && i.every(x => x.complete && x.naturalWidth > 0) }`)
	type card struct {
		ID, Name, Title, Item, ItemHref string
		Fits                            bool
	}
	var cards []card
	jsonOf(t, page, `() => [...document.querySelectorAll('.thumb')].map(f => ({ID: f.dataset.artifactId,
		Name: f.querySelector('.art-name').textContent, Title: f.querySelector('.art-name').title,
		Item: f.querySelector('.art-item').textContent, ItemHref: f.querySelector('.art-item').getAttribute('href'),
		Fits: f.scrollWidth <= f.clientWidth && f.querySelector('.art-name').getBoundingClientRect().right <= f.getBoundingClientRect().right + 0.5}))`, &cards)
	if len(cards) != 4 {
		t.Fatalf("%d artifact cards, want 4", len(cards))
	}
	for i, c := range cards {
		if c.ID != wantIDs[i] || c.Name != wantNames[i] || c.Title != wantNames[i] || c.Item != urls[i] || c.ItemHref != fmt.Sprintf("#item-%d", i) || !c.Fits {
			t.Errorf("card %d: %+v, want artifact %s named %q (title too) for item %s linking #item-%d, within its card", i, c, wantIDs[i], wantNames[i], urls[i], i)
		}
	}
	type row struct{ Index, Href, Name, Title string }
	var rows []row
	jsonOf(t, page, `() => [...document.querySelectorAll('#h-items ~ .scroll tbody tr')].map(tr => { const a = tr.querySelector('td.item-artifact a');
		return {Index: tr.id, Href: a ? a.getAttribute('href') : '', Name: a ? a.textContent : '', Title: a ? a.title : ''} })`, &rows)
	if len(rows) != 4 {
		t.Fatalf("%d item rows, want 4", len(rows))
	}
	for i, r := range rows {
		if r.Index != fmt.Sprintf("item-%d", i) || r.Href != "/artifacts/"+wantIDs[i] || r.Name != wantNames[i] || r.Title != wantNames[i] {
			t.Errorf("item row %d: %+v, want item-%d linking /artifacts/%s named %q", i, r, i, wantIDs[i], wantNames[i])
		}
	}
	shot(t, page, shots, "artifacts.png")
	// The card's item link leads to the item's row.
	page.MustElement(`.thumb[data-artifact-id="` + wantIDs[2] + `"] .art-item`).MustClick()
	until(t, page, "the item's row targeted", `() => location.hash === '#item-2'`)
	t.Logf("screenshots in %s", shots)
}

// TestCancelAsksAndFinishedRunsSayRanForInChromium (issue 14 item 5):
// Cancel asks first (a dismissed question leaves the run running), then
// cancels; a finished run shows no Cancel button and says "ran for …";
// the page spells canceled as the contract does, nowhere "cancelled".
// Without JavaScript, Cancel leads to a confirmation page whose button
// cancels.
func TestCancelAsksAndFinishedRunsSayRanForInChromium(t *testing.T) {
	fixture.NeedChromium(t)
	e := newEnv(t, "", true)
	shots := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	b := launchChromium(t)
	page := b.MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)

	// A finished run: no Cancel, "ran for".
	done := e.submit(map[string]any{"items": 2, "sleepMs": 5})
	e.waitStatus(done, engine.StatusSucceeded)
	page.MustNavigate(e.srv.URL + "/runs/" + done).MustWaitLoad()
	if n := page.MustEval(`() => document.querySelectorAll('#cancel, form[hx-post$="/cancel"]').length`).Int(); n != 0 {
		t.Fatalf("a succeeded run shows %d Cancel controls, want none", n)
	}
	if got := text(t, page, `() => { const r = document.getElementById('ran-for'); return r ? r.textContent : '' }`); !strings.HasPrefix(got, "ran for ") || len(got) <= len("ran for ") {
		t.Fatalf("finished run's head says %q, want \"ran for <duration>\"", got)
	}
	if got := text(t, page, `() => [...document.querySelectorAll('.kv dt')].map(d => d.textContent).join('|')`); !strings.Contains(got, "Ran for") || strings.Contains(got, "Running for") {
		t.Fatalf("overview labels %q, want Ran for", got)
	}

	// Cancel asks; No keeps the run running.
	victim := e.submit(map[string]any{"items": 60, "sleepMs": 1000})
	e.waitStatus(victim, engine.StatusRunning)
	page.MustNavigate(e.srv.URL + "/runs/" + victim).MustWaitLoad()
	until(t, page, "running status shown", `() => document.getElementById('run-live').dataset.status === 'running' && !!document.getElementById('cancel')`)
	if got := text(t, page, `() => document.getElementById('ran-for') ? 'shown' : ''`); got != "" {
		t.Fatal("a running run says ran for")
	}
	msg := clickAndAnswer(t, page, "#cancel", false)
	if !strings.HasPrefix(msg, "confirm: Cancel this run?") {
		t.Fatalf("Cancel asked %q, want a confirm starting \"Cancel this run?\"", msg)
	}
	// A refresh of the live region comes and goes; the run still runs.
	page.MustEval(`() => { window.__swaps = 0; document.body.addEventListener('htmx:afterSwap', () => window.__swaps++) }`)
	until(t, page, "a refresh after the dismissed question", `() => window.__swaps >= 1`)
	if r, _ := e.eng.Get(ctx, victim); r.Status != engine.StatusRunning {
		t.Fatalf("run is %s after Cancel was dismissed, want running", r.Status)
	}
	// Yes cancels.
	clickAndAnswer(t, page, "#cancel", true)
	until(t, page, "canceled status shown", `() => document.getElementById('run-live').dataset.status === 'canceled' && !document.getElementById('cancel') && !!document.getElementById('ran-for')`)
	r, err := e.eng.Get(ctx, victim)
	if err != nil || r.Status != engine.StatusCanceled || r.Error == nil || r.Error.Code != engine.RunCanceled {
		t.Fatalf("database after Cancel: %+v %v", r, err)
	}
	if got := text(t, page, `() => document.querySelector('#run-live .badge').textContent`); got != "canceled" {
		t.Fatalf("badge %q, want canceled", got)
	}
	// The error's message comes from the engine; the page spells it the
	// contract's way, like every other word on it.
	until(t, page, "the error shown", `() => !!document.querySelector('#run-live .alert.bad')`)
	if body := text(t, page, `() => document.body.innerText + document.title`); strings.Contains(strings.ToLower(body), "cancelled") || !strings.Contains(body, "RUN_CANCELED") {
		t.Fatalf("the page spells cancelled or lacks the error:\n%s", body)
	}
	shot(t, page, shots, "canceled.png")
	page.MustNavigate(e.srv.URL + "/?status=canceled").MustWaitLoad()
	if body := text(t, page, `() => document.body.innerText`); strings.Contains(strings.ToLower(body), "cancelled") {
		t.Fatalf("the runs list spells cancelled:\n%s", body)
	}

	// Without JavaScript: Cancel leads to the confirmation page, which
	// changes nothing until its button is pressed.
	plain := e.submit(map[string]any{"items": 60, "sleepMs": 1000})
	e.waitStatus(plain, engine.StatusRunning)
	np := noScriptPage(t, b, ctx)
	np.MustNavigate(e.srv.URL + "/runs/" + plain).MustWaitLoad()
	wait := np.MustWaitNavigation()
	clickOn(t, np, "#cancel")
	wait()
	if got := text(t, np, `() => location.pathname + '|' + document.querySelector('#confirm-cancel h1').textContent`); got != "/runs/"+plain+"/cancel|Cancel this dev_echo run?" {
		t.Fatalf("after Cancel without JavaScript: %q, want the confirmation page", got)
	}
	shot(t, np, shots, "confirm-cancel.png")
	if r, _ := e.eng.Get(ctx, plain); r.Status != engine.StatusRunning {
		t.Fatalf("run is %s on the confirmation page, want running", r.Status)
	}
	wait = np.MustWaitNavigation()
	clickOn(t, np, "#confirm-cancel-yes")
	wait()
	if got := text(t, np, `() => location.pathname + '|' + document.getElementById('run-live').dataset.status`); got != "/runs/"+plain+"|canceled" {
		t.Fatalf("after the confirmation: %q, want the run page showing canceled", got)
	}
	if r, _ := e.eng.Get(ctx, plain); r.Status != engine.StatusCanceled {
		t.Fatalf("run is %s after the confirmation, want canceled", r.Status)
	}
	// A finished run's confirmation page cancels nothing.
	np.MustNavigate(e.srv.URL + "/runs/" + done + "/cancel").MustWaitLoad()
	if got := text(t, np, `() => document.querySelector('#confirm-cancel h1').textContent + '|' + document.querySelectorAll('#confirm-cancel form').length`); got != "This run is over|0" {
		t.Fatalf("confirmation page of a finished run: %q", got)
	}
	t.Logf("screenshots in %s", shots)
}

// TestRunsListSummariesFiltersAndFaviconInChromium (issue 14 item 6):
// each row says what its run works on (the first URL and how many more,
// the login host, the step count, a crawl's start), never a secret; a
// filter applies as soon as it changes, in place and in the address bar,
// with no Apply button; without JavaScript the Apply button is there and
// filters; the pages link a favicon, served at /favicon.ico even before
// the token is given.
func TestRunsListSummariesFiltersAndFaviconInChromium(t *testing.T) {
	e := newLiveEnvWith(t, liveOptions{Stopped: true})
	shots := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	br := launchChromium(t)
	page := br.MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)

	var many []string
	for i := 1; i <= 150; i++ {
		many = append(many, fmt.Sprintf("https://shop.example/products/%d", i))
	}
	steps := []map[string]any{}
	for i := 0; i < 12; i++ {
		steps = append(steps, map[string]any{"action": "wait_for", "selector": fmt.Sprintf("#s%d", i)})
	}
	// login needs a session that outlives the run.
	sess, err := e.eng.CreateSession(ctx, engine.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"url": "https://accounts.example/login", "username": "ann", "password": "pw-7731"})
	login, err := e.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "login", SessionID: sess.ID, Inputs: b, Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		login.Run.RunID: "log in at accounts.example",
		e.submit("batch_extract_pages", map[string]any{"urls": many}):                                      "https://shop.example/products/1 and 149 more",
		e.submit("screenshot_pages", map[string]any{"urls": []string{"https://ann:pw@shop.example/cart"}}): "https://shop.example/cart",
		e.submit("run_steps", map[string]any{"startUrl": "https://shop.example/cart", "steps": steps}):     "12 steps from https://shop.example/cart",
		e.submit("crawl_site", map[string]any{"startUrl": "https://docs.example/", "maxPages": 50}):        "from https://docs.example/, up to 50 pages",
		e.submit("dev_echo", map[string]any{"items": 5, "sleepMs": 5}):                                     "items 5 · sleepMs 5",
	}
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	var got map[string]string
	jsonOf(t, page, `() => Object.fromEntries([...document.querySelectorAll('#runs tbody tr')].map(tr => { const s = tr.querySelector('.summary'); return [tr.dataset.runId, s ? s.textContent + (s.title === s.textContent ? '' : ' (title ' + s.title + ')') : ''] }))`, &got)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(got), len(want), got)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("run %s: summary %q, want %q", id, got[id], w)
		}
	}
	if html := page.MustHTML(); strings.Contains(html, "pw-7731") || strings.Contains(html, "ann:pw") {
		t.Fatal("a secret or a URL's password is on the runs list")
	}
	shot(t, page, shots, "runs-summaries.png")

	// Filters apply on change, in place: no Apply button, no reload.
	if n := page.MustEval(`() => document.querySelectorAll('form.filters button, form.filters input[type=submit]').length`).Int(); n != 0 {
		t.Fatalf("the filters show %d buttons with JavaScript on, want none (they apply on change)", n)
	}
	page.MustEval(`() => { window.__noReload = 7; const s = document.getElementById('f-template'); s.value = 'login'; s.dispatchEvent(new Event('change', {bubbles: true})) }`)
	until(t, page, "the list filtered in place", `() => { const rows = document.querySelectorAll('#runs tbody tr'); return rows.length === 1 && rows[0].querySelector('.run-what a').textContent === 'login' && location.search === '?template=login' }`)
	if page.MustEval(`() => window.__noReload`).Int() != 7 {
		t.Fatal("the page reloaded; a filter must apply in place")
	}
	page.MustEval(`() => { const s = document.getElementById('f-template'); s.value = ''; s.dispatchEvent(new Event('change', {bubbles: true})) }`)
	until(t, page, "the filter cleared", `() => document.querySelectorAll('#runs tbody tr').length === 6`)

	// The favicon: linked, served, an image.
	if got := text(t, page, `() => { const l = document.querySelector('link[rel=icon]'); return l ? l.getAttribute('href') + '|' + l.type : '' }`); got != "/favicon.ico|image/svg+xml" {
		t.Fatalf("favicon link %q", got)
	}
	if got := text(t, page, `async () => { const r = await fetch('/favicon.ico'); return r.status + ' ' + r.headers.get('content-type') }`); got != "200 image/svg+xml" {
		t.Fatalf("GET /favicon.ico: %s", got)
	}
	if w := page.MustEval(`() => new Promise(ok => { const i = new Image(); i.onload = () => ok(i.naturalWidth); i.onerror = () => ok(0); i.src = '/favicon.ico' })`).Int(); w != 32 {
		t.Fatalf("favicon decodes %d px wide, want 32", w)
	}

	// Without JavaScript: the Apply button filters.
	np := noScriptPage(t, br, ctx)
	np.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	np.MustEval(`() => { document.getElementById('f-template').value = 'run_steps' }`)
	if !np.MustEval(`() => { const b = document.querySelector('form.filters button[type=submit]'); return !!b && b.offsetWidth > 0 }`).Bool() {
		t.Fatal("no visible Apply button without JavaScript")
	}
	wait := np.MustWaitNavigation()
	clickOn(t, np, "form.filters button[type=submit]")
	wait()
	if got := text(t, np, `() => new URLSearchParams(location.search).get('template') + '|' + [...document.querySelectorAll('#runs tbody tr .run-what a')].map(a => a.textContent).join(',')`); got != "run_steps|run_steps" {
		t.Fatalf("after Apply without JavaScript: %q, want only the run_steps run", got)
	}
	shot(t, np, shots, "runs-noscript.png")

	// With a token, the favicon needs none (a browser asks before login).
	te := newEnv(t, "s3cret-token", false)
	resp, err := http.Get(te.srv.URL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("GET /favicon.ico with a token set: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Logf("screenshots in %s", shots)
}

// TestInFlightAndFinalProgressInChromium (issue 14 item 7): while a batch
// runs, its run page lists the URL each of its tabs is on (slow pages:
// each stays in flight for seconds), refreshed with the page; a quick
// 2-step run_steps run ends showing 3/3 (startUrl and its two steps) with
// each step in the items table.
func TestInFlightAndFinalProgressInChromium(t *testing.T) {
	e := newLiveEnv(t, "")
	site := fixture.New(t)
	shots := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)

	// Each page commits at once, then waits 3 s for its image: the load
	// event, which the batch waits for, comes late (images are loaded:
	// blockResources [] overrides the default that blocks them).
	var urls []string
	for i := 1; i <= 4; i++ {
		urls = append(urls, site.URL("/image?src="+url.QueryEscape("/slow?ms=3000")+fmt.Sprintf("&n=%d", i)))
	}
	id := e.submit("batch_extract_pages", map[string]any{"urls": urls, "concurrency": 2, "blockResources": []string{}})
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	inList := `(u => ` + jsString(strings.Join(urls, "\n")) + `.split('\n').includes(u))`
	until(t, page, "the tabs' URLs in flight", `() => { const u = [...document.querySelectorAll('#in-flight .in-flight-url')].map(s => s.textContent);
		return u.length >= 1 && u.every(`+inList+`) }`)
	var first []string
	jsonOf(t, page, `() => [...document.querySelectorAll('#in-flight .in-flight-url')].map(s => s.textContent)`, &first)
	shot(t, page, shots, "in-flight.png")
	// The list follows the run: other pages come in flight.
	until(t, page, "other pages in flight", `() => { const u = [...document.querySelectorAll('#in-flight .in-flight-url')].map(s => s.textContent);
		return u.length >= 1 && u.every(`+inList+`) && u.some(x => !`+jsString(strings.Join(first, "\n"))+`.split('\n').includes(x)) }`)
	if run := e.waitRun(id); run.Status != engine.StatusSucceeded {
		t.Fatalf("batch %s: %+v", run.Status, run.Error)
	}
	until(t, page, "nothing in flight once done", `() => document.getElementById('run-live').dataset.status === 'succeeded' && !document.getElementById('in-flight')`)

	// A quick run_steps run ends at 3/3.
	steps := e.submitSteps(map[string]any{"startUrl": site.URL("/form"), "steps": []map[string]any{
		{"action": "type", "selector": "#q", "text": "mug"},
		{"action": "extract", "name": "title", "selector": "#title"},
	}})
	run := e.waitRun(steps)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("run_steps %s: %+v", run.Status, run.Error)
	}
	if p := run.Progress; p.DoneSteps != 3 || p.TotalSteps != 3 {
		t.Fatalf("run_steps ended at %d/%d, want 3/3", p.DoneSteps, p.TotalSteps)
	}
	page.MustNavigate(e.srv.URL + "/runs/" + steps).MustWaitLoad()
	if got := text(t, page, `() => document.querySelector('#run-live .kv .bar .label').textContent.trim()`); got != "3/3" {
		t.Fatalf("run page progress %q, want 3/3", got)
	}
	if got := text(t, page, `() => [...document.querySelectorAll('#h-items ~ .scroll tbody tr')].map(tr => tr.children[1].textContent + ' ' + tr.querySelector('.badge').textContent).join('|')`); got != "step 0 type succeeded|step 1 extract succeeded" {
		t.Fatalf("items %q, want the two steps succeeded", got)
	}
	shot(t, page, shots, "steps-done.png")
	t.Logf("screenshots in %s", shots)
}
