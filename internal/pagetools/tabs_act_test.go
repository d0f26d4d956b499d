package pagetools_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestSessionEventsOnTheDashboard: a few interactive calls on a session
// (one refused) are recorded on it, and the dashboard's session page lists
// them in order, with the password fill masked and the typed password
// nowhere on the page; the sessions list links to it.
func TestSessionEventsOnTheDashboard(t *testing.T) {
	fixture.NeedChromium(t)
	base, _ := interactiveSite(t)
	cs, sid, _, dash := daemon(t)
	snap, _ := must(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": base + "/login"})
	must(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "textbox", "User"), "action": "fill", "value": "ada"})
	pw := refOf(t, snap, "textbox", "Password")
	must(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": pw, "action": "fill", "value": "hunter2"})
	refuses(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": "e999", "action": "click"}, "INVALID_PARAMETER", "")

	body := getPage(t, dash+"/sessions/"+sid)
	if strings.Contains(body, "hunter2") {
		t.Fatalf("the session page shows the typed password")
	}
	rows := regexp.MustCompile(`(?s)<tr data-seq="(\d+)" data-outcome="([A-Z_a-z]+)">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, r := range rows {
		cells := regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(r[3], -1)
		var c []string
		for _, x := range cells {
			c = append(c, strings.TrimSpace(x[1]))
		}
		// seq, tool, tab, action, target, value, outcome
		got = append(got, strings.Join([]string{r[1], c[2], c[3], c[4], c[5], c[6], c[7]}, " | "))
	}
	want := []string{
		"1 | browser_navigate | t1 |  | " + base + "/login |  | ok",
		"2 | browser_act | t1 | fill | " + refOf(t, snap, "textbox", "User") + ` textbox &#34;User&#34; | ada | ok`,
		"3 | browser_act | t1 | fill | " + pw + ` textbox &#34;Password&#34; | •••••• | ok`,
		"4 | browser_act | t1 | click | e999 |  | INVALID_PARAMETER",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("session page rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if list := getPage(t, dash+"/sessions"); !strings.Contains(list, `href="/sessions/`+sid+`"`) {
		t.Errorf("the sessions list does not link %s", sid)
	}
	if resp, err := http.Get(dash + "/sessions/sess_never"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session's page: %v %v; want 404", resp, err)
	}
}

// getPage GETs a dashboard page that must answer 200.
func getPage(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

// TestHoverDragScrollAndFrames: hover opens a :hover menu, drag reorders
// an HTML5 drag-and-drop list, a page scroll fires the page's scroll
// handler, and references inside a same-site and a cross-site iframe are
// clicked and filled in their own frame.
func TestHoverDragScrollAndFrames(t *testing.T) {
	fixture.NeedChromium(t)
	base, _ := interactiveSite(t)
	cs, sid, _, _ := daemon(t)
	act := func(ref, action, value string, more ...string) string {
		a := map[string]any{"sessionId": sid, "ref": ref, "action": action, "value": value}
		if len(more) > 0 {
			a["target"] = more[0]
		}
		text, _ := must(t, cs, "browser_act", a)
		return text
	}
	wait := func(text string) string {
		snap, _ := must(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": text, "timeoutMs": 60000})
		return snap
	}

	snap, _ := must(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": base + "/menu"})
	if strings.Contains(snap, "Teapots") {
		t.Fatalf("the menu shows before the hover:\n%s", snap)
	}
	if got := act(refOf(t, snap, "button", "Products"), "hover", ""); !strings.Contains(got, `link "Teapots"`) {
		t.Errorf("hover did not open the menu:\n%s", got)
	}

	snap, _ = must(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": base + "/drag"})
	act(refOf(t, snap, "button", "Alpha"), "drag", "", refOf(t, snap, "button", "Gamma"))
	wait("Order: Beta Gamma Alpha")
	refuses(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Beta"), "action": "drag", "target": "e999"}, "INVALID_PARAMETER", "")

	must(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": base + "/scroll"})
	act("", "scroll", "bottom")
	wait("Scrolled past 500")
	refuses(t, cs, "browser_act", map[string]any{"sessionId": sid, "action": "scroll", "value": "sideways"}, "INVALID_PARAMETER", "value")

	snap, _ = must(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": base + "/frames"})
	for _, who := range []string{"same", "cross"} {
		if !strings.Contains(snap, `button "Press `+who+`"`) {
			fixture.WaitUntil(t, "the "+who+" frame in the snapshot", func() bool {
				snap, _ = must(t, cs, "browser_snapshot", map[string]any{"sessionId": sid})
				return strings.Contains(snap, `button "Press `+who+`"`)
			})
		}
		act(refOf(t, snap, "textbox", "Box "+who), "fill", "hi "+who)
		act(refOf(t, snap, "button", "Press "+who), "click", "")
		wait("clicked " + who + " hi " + who)
	}
}
