package web_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestAnswerInChromium answers a run's questions through the dashboard in
// Chromium: the runs list marks the run once it asks (live refresh); the
// run page shows the password field; a half-typed code survives the page's
// live refreshes; sending it makes the run succeed with the value shown as
// ***, the code is nowhere on the page and the list no longer marks the
// run. Then Yes and No on a run with two confirm questions, its page
// opened before the run asks.
func TestAnswerInChromium(t *testing.T) {
	fixture.NeedChromium(t)
	const otp = "731902"
	e := newEnv(t, "", true)
	shots := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)

	// The runs list marks the run once it asks (its live refresh brings
	// the mark in).
	id := e.submitAsking(`{"tool":"t","sleepMs":300,"ask":[{"requestId":"otp","kind":"secret","message":"Enter the code"}]}`)
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	until(t, page, "waiting row", `() => { const tr = document.querySelector('tr[data-run-id="`+id+`"]'); return !!tr && tr.classList.contains('waiting') && !!tr.querySelector('.badge.s-waiting') && !!tr.querySelector('.badge.s-running') }`)
	if got := text(t, page, `() => document.getElementById('waiting-count').dataset.count`); got != "1" {
		t.Fatalf("waiting count %q, want 1", got)
	}
	page.MustScreenshot(filepath.Join(shots, "runs-waiting.png"))

	// The run page: the panel with the password field.
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	page.MustEval(`() => { window.__swaps = 0; document.body.addEventListener('htmx:afterSwap', () => window.__swaps++) }`)
	field := `form.answer[data-request-id="otp"] input[name="value"]`
	until(t, page, "password field shown", `() => { const i = document.querySelector('`+field+`'); return !!i && i.type === 'password' && i.autocomplete === 'one-time-code' }`)
	if got := text(t, page, `() => document.querySelector('#run-ask h2').textContent`); got != "This run is waiting for you" {
		t.Fatalf("panel heading %q", got)
	}
	if got := text(t, page, `() => document.querySelector('#run-ask .message').textContent`); got != "Enter the code" {
		t.Fatalf("question %q", got)
	}
	page.MustScreenshot(filepath.Join(shots, "run-waiting.png"))

	// Half a code typed, then the focus elsewhere: refreshes keep it.
	typeInto(t, page, field, otp[:3])
	page.MustEval(`() => document.activeElement.blur()`)
	page.MustEval(`() => { window.__swapsAtBlur = window.__swaps }`)
	until(t, page, "two live refreshes", `() => window.__swaps >= window.__swapsAtBlur + 2`)
	if got := text(t, page, `() => document.querySelector('`+field+`').value`); got != otp[:3] {
		t.Fatalf("after refreshes the field holds %q, want %q", got, otp[:3])
	}

	// The rest of the code, then Send.
	typeInto(t, page, field, otp[3:])
	clickOn(t, page, `form.answer[data-request-id="otp"] button[type="submit"]`)
	run := e.waitStatus(id, engine.StatusSucceeded)
	var res struct {
		Answers map[string]map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil || res.Answers["otp"]["value"] != engine.SecretMask {
		t.Fatalf("result %s (%v), want the value masked", run.Result, err)
	}
	until(t, page, "succeeded shown", `() => document.getElementById('run-live').dataset.status === 'succeeded'`)
	if got := text(t, page, `() => document.getElementById('answer-status').textContent.trim()`); got != "Answer sent (otp)." {
		t.Fatalf("notice %q", got)
	}
	result := text(t, page, `() => document.querySelector('section[aria-labelledby="h-result"] pre').textContent`)
	if !strings.Contains(result, `"value": "***"`) {
		t.Fatalf("result on the page: %s", result)
	}
	if html := text(t, page, `() => document.documentElement.outerHTML`); strings.Contains(html, otp) || strings.Contains(html, "This run is waiting for you") {
		t.Fatal("the page still asks, or holds the code")
	}
	page.MustScreenshot(filepath.Join(shots, "run-answered.png"))
	page.MustNavigate(e.srv.URL + "/").MustWaitLoad()
	if marked := page.MustEval(`() => !!document.querySelector('tr.waiting, #waiting-count')`).Bool(); marked {
		t.Fatal("the runs list still marks a waiting run")
	}

	// Yes and No, on a page opened before the run asks: its live refresh
	// brings the forms in.
	id = e.submitAsking(`{"tool":"t","sleepMs":500,"ask":[{"requestId":"buy","kind":"confirm","message":"Buy it?"},{"requestId":"ship","kind":"confirm","message":"Ship it today?"}]}`)
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	until(t, page, "both confirm forms shown", `() => document.querySelectorAll('form.answer[data-kind="confirm"]').length === 2`)
	clickOn(t, page, `form.answer[data-request-id="buy"] button[name="confirm"][value="yes"]`)
	until(t, page, "buy answered", `() => !document.querySelector('form.answer[data-request-id="buy"]') && document.getElementById('answer-status').textContent.includes('Answer sent (buy).')`)
	clickOn(t, page, `form.answer[data-request-id="ship"] button[name="confirm"][value="no"]`)
	run = e.waitStatus(id, engine.StatusSucceeded)
	var conf struct {
		Answers map[string]map[string]bool `json:"answers"`
	}
	if err := json.Unmarshal(run.Result, &conf); err != nil || !conf.Answers["buy"]["confirm"] || conf.Answers["ship"]["confirm"] || len(conf.Answers["ship"]) != 1 {
		t.Fatalf("result %s (%v), want buy yes and ship no", run.Result, err)
	}
	until(t, page, "confirm run succeeded", `() => document.getElementById('run-live').dataset.status === 'succeeded'`)
	t.Logf("screenshots in %s", shots)
}

// typeInto focuses the element selector names and types text into it as
// keyboard input (Input.insertText). rod's Element.Input is not used: its
// wait for two stable animation frames sometimes never returned on a page
// that htmx refreshes every second.
func typeInto(t *testing.T, p *rod.Page, selector, text string) {
	t.Helper()
	p.MustElement(selector)
	if _, err := p.Eval(`s => document.querySelector(s).focus()`, selector); err != nil {
		t.Fatalf("focus %s: %v", selector, err)
	}
	if err := p.InsertText(text); err != nil {
		t.Fatalf("type into %s: %v", selector, err)
	}
}

// clickOn clicks the middle of the element selector names with the mouse
// (see typeInto for why not Element.Click).
func clickOn(t *testing.T, p *rod.Page, selector string) {
	t.Helper()
	p.MustElement(selector)
	for attempt := 1; ; attempt++ {
		// A real click lands where the element is on the screen: bring it
		// into view first (a focused field elsewhere may have scrolled the
		// page), and note whether the click reached an element the
		// selector matches: the page may move between locating and
		// clicking (a live frame's first image, a refresh swapping the
		// panel), and a click that lands elsewhere is made again, as a
		// person clicks again.
		res, err := p.Eval(`s => {
			const e = document.querySelector(s);
			if (!e) return null;
			e.scrollIntoView({block: 'center', inline: 'center'});
			window.__clickedOn = false;
			window.__clickMark = 1;
			// Do the page's event listeners run? Not where its scripts
			// are off (Emulation.setScriptExecutionDisabled); a probe
			// event says so before the click, so a click that never
			// happened is not taken for one on a page without scripts.
			let listens = false;
			const probe = () => { listens = true; };
			document.addEventListener('clickon-probe', probe);
			document.dispatchEvent(new Event('clickon-probe'));
			document.removeEventListener('clickon-probe', probe);
			window.__listens = listens;
			document.addEventListener('click', ev => { if (ev.target.closest && ev.target.closest(s)) window.__clickedOn = true; }, {capture: true, once: true});
			const r = e.getBoundingClientRect();
			return [r.x + r.width / 2, r.y + r.height / 2];
		}`, selector)
		if err != nil {
			t.Fatalf("locate %s: %v", selector, err)
		}
		if res.Value.Nil() {
			t.Fatalf("%s is no longer on the page", selector)
		}
		xy := res.Value.Arr()
		if err := p.Mouse.MoveTo(proto.Point{X: xy[0].Num(), Y: xy[1].Num()}); err != nil {
			t.Fatal(err)
		}
		if err := p.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
			t.Fatalf("click %s: %v", selector, err)
		}
		// It landed when the listener saw it, when the page is a new
		// document (no mark: the click navigated) or cannot be read while
		// it navigates, or — in a page whose scripts are off, where no
		// listener runs — when the element is still under the pointer.
		// Where listeners run, only the listener's word counts: the
		// element under the pointer afterwards says nothing of a click
		// that never happened (mousedown and mouseup parted by a redraw).
		landed, err := p.Eval(`(s, x, y) => { if (window.__clickMark !== 1 || window.__clickedOn === true) return true;
			if (window.__listens) return false;
			const e = document.elementFromPoint(x, y); return !!(e && e.closest && e.closest(s)) }`, selector, xy[0].Num(), xy[1].Num())
		if err != nil || landed.Value.Bool() {
			return
		}
		if attempt == 5 {
			t.Fatalf("5 clicks on %s landed elsewhere: the page kept moving under the pointer", selector)
		}
	}
}

// pressDone presses the takeover's Done as a person does and waits until
// the page took the answer (the takeover question is gone from it). The
// page's form requests are recorded from before the click: a failure says
// whether the answer was sent, what the dashboard answered, and the error
// the page shows (printed when the test fails, here or later) — with the
// daemon's log (fixture.Logger) the whole story of a press that did not end
// a takeover.
func pressDone(t *testing.T, p *rod.Page) {
	t.Helper()
	p.MustEval(`() => {
		if (window.__htmxLog) return;
		window.__htmxLog = [];
		const note = (name, ev) => {
			const d = ev.detail || {}, x = d.xhr, cfg = d.requestConfig || {};
			const said = name === 'htmx:afterRequest' && x && typeof x.responseText === 'string'
				? (x.responseText.includes('takeover-done') ? 'reply asks' : 'reply does not ask') + ' status=' + ((x.responseText.match(/data-status="([^"]*)"/) || [])[1] || '?')
				: '';
			window.__htmxLog.push([Math.round(performance.now()), name, (ev.target && (ev.target.id || ev.target.tagName)) || '',
				cfg.verb || '', cfg.path || '', x ? x.status : '', d.successful === undefined ? '' : String(d.successful), said].join(' '));
		};
		for (const name of ['htmx:beforeRequest', 'htmx:afterRequest', 'htmx:beforeSwap', 'htmx:afterSwap', 'htmx:sendError', 'htmx:responseError', 'htmx:sendAbort', 'htmx:targetError', 'htmx:swapError', 'submit', 'pointerdown', 'pointerup', 'focusin'])
			document.addEventListener(name, ev => note(name, ev), true);
	}`)
	t.Cleanup(func() {
		if t.Failed() {
			// The test's own context may be over by now.
			if res, err := p.Context(context.Background()).Timeout(10 * time.Second).Eval(`() => {
				const done = document.querySelector('#takeover-done'), live = document.querySelector('#run-live'), a = document.activeElement;
				const state = ['now ' + Math.round(performance.now()),
					'Done buttons: ' + document.querySelectorAll('#takeover-done').length + (done ? ' (in #run-live: ' + !!done.closest('#run-live') + ')' : ''),
					'#run-live: ' + (live ? 'status=' + live.dataset.status + ' polls=' + live.hasAttribute('hx-get') : 'none'),
					'preserve pantry: ' + !!document.getElementById('--htmx-preserve-pantry--'),
					'focus: ' + (a ? a.tagName + '#' + a.id : 'none')];
				return (window.__htmxLog ? window.__htmxLog.join('\n') : '(no record: the page was replaced)') + '\n' + state.join('\n');
			}`); err == nil {
				t.Logf("the page's requests and events from Done on, then its state:\n%s", res.Value.Str())
			}
		}
	})
	clickOn(t, p, "#takeover-done")
	var state string
	fixture.WaitUntil(t, "the page to take the takeover's Done", func() bool {
		res, err := p.Eval(`() => {
			const err = document.querySelector('#answer-status .alert.bad');
			if (err) return 'error: ' + err.textContent.replace(/\s+/g, ' ').trim();
			return document.querySelector('#takeover-done') ? '' : 'taken';
		}`)
		if err != nil {
			return false
		}
		state = res.Value.Str()
		return state != ""
	})
	if state != "taken" {
		t.Fatalf("pressing Done: the page shows %s", state)
	}
}

// askingPage opens, in Chromium, the page of a run that asks "Go on?"
// (confirm, requestId "go").
func askingPage(t *testing.T) (*env, *rod.Page, string) {
	t.Helper()
	fixture.NeedChromium(t)
	e := newEnv(t, "", true)
	ctx, cancel := fixture.Context(t)
	t.Cleanup(cancel)
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 900, 1, false)
	id := e.submitAsking(`{"tool":"t","ask":[{"requestId":"go","kind":"confirm","message":"Go on?"}]}`)
	page.MustNavigate(e.srv.URL + "/runs/" + id).MustWaitLoad()
	return e, page, id
}

// TestPressOutlivesARedraw: a person presses Yes on a waiting run's page
// while the page's refresh of its live region comes in (a poll sent just
// before the press), and releases after the refresh answered. The browser
// drops a click whose element moved between press and release — the
// answer form is kept across refreshes (hx-preserve), but keeping it moves
// it — so before app.js held refreshes back during a press this click was
// lost and the run waited on; now the click lands and the run goes on.
func TestPressOutlivesARedraw(t *testing.T) {
	e, page, id := askingPage(t)
	yes := `form.answer[data-request-id="go"] button[value="yes"]`
	until(t, page, "the Yes button", `() => !!document.querySelector('`+yes+`')`)
	res := page.MustEval(`(s) => {
		window.__yes = 0;
		window.__polls = 0;
		document.addEventListener('click', ev => { if (ev.target.closest(s)) window.__yes++ }, true);
		document.body.addEventListener('htmx:afterRequest', ev => {
			const c = ev.detail.requestConfig || {};
			if (c.verb === 'get' && c.elt && c.elt.id === 'run-live') window.__polls++;
		});
		const r = document.querySelector(s).getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	}`, yes).Arr()
	at := proto.Point{X: res[0].Num(), Y: res[1].Num()}
	if err := page.Mouse.MoveTo(at); err != nil {
		t.Fatal(err)
	}
	if err := page.Mouse.Down(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	// The refresh a poll sent just before the press: the region's own GET,
	// as its "every 1s" trigger sends it.
	page.MustEval(`() => { window.__pollsAtPress = window.__polls;
		htmx.ajax('GET', location.pathname, {source: '#run-live', target: '#run-live', swap: 'outerHTML'}) }`)
	until(t, page, "the refresh's answer during the press", `() => window.__polls > window.__pollsAtPress`)
	if err := page.Mouse.Up(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if got := text(t, page, `() => String(window.__yes)`); got != "1" {
		t.Fatalf("clicks on Yes after the press and release: %s, want 1 (the refresh swallowed the click)", got)
	}
	e.waitStatus(id, engine.StatusSucceeded)
}

// TestAnswerOutlivesARefresh: a person presses Yes; while the answer is on
// its way, the page's refresh of its live region (sent before the answer
// reached the daemon, so it still shows the question) comes back and
// replaces the region. htmx picked the answer's target — the region — when
// it sent the answer, so its reply found that element gone and was dropped:
// the page kept the question and, with the focus on Yes, stopped
// refreshing (CI: TestAddressBarInTakeover waited 20 minutes for Done to
// go). Now the reply goes into the region as it is: the question is gone
// the moment the answer's reply is in.
func TestAnswerOutlivesARefresh(t *testing.T) {
	e, page, id := askingPage(t)
	form := `form.answer[data-request-id="go"]`
	until(t, page, "the question", `() => !!document.querySelector('`+form+`')`)
	// Hold the answer in the page once htmx sent it (its target chosen),
	// and count the region's refreshes and the answer's replies.
	page.MustEval(`() => {
		window.__polls = 0; window.__answers = 0; window.__held = null;
		const open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
		XMLHttpRequest.prototype.open = function (method, url) { this.__answer = method === 'POST' && /\/answer$/.test(url); return open.apply(this, arguments); };
		XMLHttpRequest.prototype.send = function (body) {
			if (this.__answer && !window.__held) { window.__held = () => send.call(this, body); return; }
			return send.call(this, body);
		};
		document.addEventListener('htmx:afterRequest', ev => {
			const c = ev.detail.requestConfig || {};
			if (c.verb === 'get') window.__polls++;
			if (c.verb === 'post') window.__answers++;
		});
	}`)
	clickOn(t, page, form+` button[value="yes"]`)
	until(t, page, "the answer held after htmx sent it", `() => !!window.__held`)
	// The refresh that was out when the answer left: it still shows the
	// question, and it replaces the region the answer targets.
	page.MustEval(`() => { window.__pollsBefore = window.__polls;
		htmx.ajax('GET', location.pathname, {source: '#run-live', target: '#run-live', swap: 'outerHTML'}) }`)
	until(t, page, "the refresh's reply", `() => window.__polls > window.__pollsBefore`)
	if got := text(t, page, `() => String(!!document.querySelector('`+form+`'))`); got != "true" {
		t.Fatalf("the refresh sent before the answer shows the question: %s, want true (the test would prove nothing)", got)
	}
	page.MustEval(`() => window.__held()`)
	until(t, page, "the answer's reply", `() => window.__answers > 0`)
	got := text(t, page, `() => {
		const ok = document.querySelector('#answer-status .alert.ok');
		return [String(!!document.querySelector('`+form+`')), ok ? ok.textContent.trim() : 'no note'].join('|');
	}`)
	if got != "false|Answer sent (go)." {
		t.Fatalf("after the answer's reply: question shown|note = %s, want false|Answer sent (go). (the reply was dropped)", got)
	}
	e.waitStatus(id, engine.StatusSucceeded)
}
