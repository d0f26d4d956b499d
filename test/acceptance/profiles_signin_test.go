package acceptance

// Issue 31, acceptance 3: an MCP client asks for a new profile
// (sign_in_profile), gets the dashboard URL and a run that waits for the
// person; the test, as the person, signs in through the dashboard's live
// view; the waiting run completes, and later runs with the profile are
// signed in.

import (
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/internal/fixture"
)

// pageTrue waits until a JavaScript expression is true in p.
func pageTrue(t *testing.T, p *rod.Page, what, js string) {
	t.Helper()
	fixture.WaitUntil(t, what, func() bool {
		res, err := p.Eval(js)
		return err == nil && res.Value.Bool()
	})
}

// liveSent waits until the live view sent the person's input.
func liveSent(t *testing.T, p *rod.Page) {
	t.Helper()
	pageTrue(t, p, "the input sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
}

// clickAt clicks at viewport point (x, y).
func clickAt(t *testing.T, p *rod.Page, x, y float64) {
	t.Helper()
	if err := p.Mouse.MoveTo(proto.Point{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	if err := p.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
}

// signInLive signs into the fixture login page shown in the live view of
// the run page p shows: focus the frame, Tab, the user name (pasted),
// Tab, the password, Enter; then Done once the members page shows.
func signInLive(t *testing.T, p *rod.Page) {
	t.Helper()
	pageTrue(t, p, "the takeover and its live frame", `() => !!document.querySelector('#takeover-done') &&
		document.querySelector('#live .live-tabs')?.dataset.control === 'true' && !!document.querySelector('#live .live-tab[data-closed="false"] .frame img.shot')`)
	res, err := p.Eval(`() => { const r = document.querySelector('#live .live-tab .frame img.shot').getBoundingClientRect(); return [r.x, r.y] }`)
	if err != nil {
		t.Fatal(err)
	}
	xy := res.Value.Arr()
	clickAt(t, p, xy[0].Num()+4, xy[1].Num()+4)
	liveSent(t, p)
	paste := func(s string) {
		if _, err := p.Eval(`(s) => { const dt = new DataTransfer(); dt.setData('text/plain', s);
			document.activeElement.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true})) }`, s); err != nil {
			t.Fatal(err)
		}
		liveSent(t, p)
	}
	key := func(k input.Key) {
		if err := p.Keyboard.Type(k); err != nil {
			t.Fatal(err)
		}
		liveSent(t, p)
	}
	key(input.Tab)
	paste(fixture.LoginUser)
	key(input.Tab)
	paste(fixture.LoginPassword)
	key(input.Enter)
	pageTrue(t, p, "the members page in the live view", `() => (document.querySelector('#live .live-tab .live-url')?.textContent || '').endsWith('/members')`)
	// Done: the dashboard's own button (its form posts the answer).
	if _, err := p.Eval(`() => document.querySelector('#takeover-done').click()`); err != nil {
		t.Fatal(err)
	}
}

func TestBlackboxSignInProfileOverMCP(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	srv := startServe(t)
	cs := connectHTTP(t, srv, nil)
	ans := callOK(t, cs, "sign_in_profile", obj{"name": "mail", "url": fx.URL("/login"), "note": "the fixture"})
	runID, _ := ans["runId"].(string)
	dash, _ := ans["dashboardUrl"].(string)
	if ans["profile"] != "mail" || runID == "" || dash != "http://"+srv.addr+"/runs/"+runID+"#live" {
		t.Fatalf("sign_in_profile: %v", ans)
	}
	if list := callOK(t, cs, "list_profiles", obj{})["profiles"].([]any); len(list) != 1 || list[0].(obj)["name"] != "mail" {
		t.Fatalf("list_profiles: %v", list)
	}

	// The person opens the dashboard URL the agent gave them.
	b := rod.New().ControlURL(startCDPChromium(t))
	if err := b.Connect(); err != nil {
		t.Fatal(err)
	}
	p := b.MustPage(dash)
	p.MustSetViewport(1280, 1100, 1, false)
	signInLive(t, p)

	run := waitTerminal(t, cs, runID)
	if run["status"] != "succeeded" || !strings.HasSuffix(sub(run, "result")["finalUrl"].(string), "/members") {
		t.Fatalf("sign-in run: %v %v %v", run["status"], run["result"], run["error"])
	}
	res := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "profile": "mail", "inputs": membersInputs(fx),
		"options": obj{"mode": "sync"}})
	if res["status"] != "succeeded" || sub(res, "result")["pages"].([]any)[0].(obj)["fields"].(obj)["secret"] != "members-only-42" {
		t.Fatalf("members page with the profile: %v %v", res["status"], res["result"])
	}
	list := callOK(t, cs, "list_profiles", obj{})["profiles"].([]any)
	if sites := list[0].(obj)["sites"].([]any); len(sites) != 1 || sites[0] != "127.0.0.1" {
		t.Fatalf("list_profiles after the sign-in: %v", list)
	}
	if strings.Contains(res["result"].(obj)["pages"].([]any)[0].(obj)["url"].(string), "sid=") {
		t.Fatal("a cookie value leaked")
	}
}
