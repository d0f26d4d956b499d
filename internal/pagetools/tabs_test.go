package pagetools_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestTabsAndConsole drives browser_tabs and browser_console on a real
// daemon and Chromium: a target=_blank link and window.open each add a
// tab (not current), switch makes a popup current, a popup that closes
// itself falls back to the tab used before it, open loads a URL and
// refuses one the policy denies, close of the current tab falls back; the console answers
// each tab's messages and uncaught errors once, then again from a seq.
func TestTabsAndConsole(t *testing.T) {
	fixture.NeedChromium(t)
	base, _ := interactiveSite(t)
	denied := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(denied.Close)
	cs, sid, proc, _ := daemon(t)
	proc.Browser.DenyHost(strings.TrimPrefix(denied.URL, "http://"))
	args := func(kv ...any) map[string]any {
		m := map[string]any{"sessionId": sid}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	snap, _ := must(t, cs, "browser_navigate", args("url", base+"/tabs"))
	_, sc := must(t, cs, "browser_tabs", args("action", "list"))
	if ids, cur := tabIDs(sc); joined(ids) != "t1" || cur != "t1" {
		t.Fatalf("tabs at start: %v current %q; want t1 current", ids, cur)
	}

	// The console: the page's log and warning and its uncaught error, once.
	var msgs []any
	fixture.WaitUntil(t, "the tabs page's uncaught error", func() bool {
		_, sc := must(t, cs, "browser_console", args("since", 0))
		msgs, _ = sc["messages"].([]any)
		return len(msgs) >= 3
	})
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, mm["level"].(string)+": "+strings.SplitN(mm["text"].(string), "\n", 2)[0])
	}
	if want := "log: tabs page 42 Object|warning: careful|exception: Error: boom"; strings.Join(got, "|") != want {
		t.Errorf("console messages %q; want %q", strings.Join(got, "|"), want)
	}
	if _, sc := must(t, cs, "browser_console", args()); len(sc["messages"].([]any)) != 0 {
		t.Errorf("a second read answered again: %v", sc["messages"])
	}
	if _, sc := must(t, cs, "browser_console", args("since", 0, "level", "error")); len(sc["messages"].([]any)) != 1 {
		t.Errorf("level error: %v; want the uncaught error alone", sc["messages"])
	}

	// A target=_blank link and window.open: two more tabs, t1 stays current.
	must(t, cs, "browser_act", args("ref", refOf(t, snap, "link", "Open popup"), "action", "click"))
	must(t, cs, "browser_act", args("ref", refOf(t, snap, "button", "Open window"), "action", "click"))
	fixture.WaitUntil(t, "both popups listed", func() bool {
		_, sc = must(t, cs, "browser_tabs", args())
		ids, _ := tabIDs(sc)
		return len(ids) == 3 && strings.Contains(tabURL(sc, "t2"), "/popup") && strings.Contains(tabURL(sc, "t3"), "/popup")
	})
	if ids, cur := tabIDs(sc); joined(ids) != "t1 t2 t3" || cur != "t1" {
		t.Fatalf("after the popups: %v current %q; want t1 t2 t3, t1 current", ids, cur)
	}
	popups := tabURL(sc, "t2") + " " + tabURL(sc, "t3")
	if !strings.Contains(popups, "/popup?n=1") || !strings.Contains(popups, "/popup?n=2") {
		t.Errorf("popup tabs at %q; want /popup?n=1 and /popup?n=2", popups)
	}

	// switch: the popup becomes current; its console is its own.
	text, sc := must(t, cs, "browser_tabs", args("action", "switch", "tab", "t3"))
	if _, cur := tabIDs(sc); cur != "t3" || !strings.Contains(text, "# Popup page") {
		t.Fatalf("switch to t3: current %q\n%s", cur, text)
	}
	must(t, cs, "browser_act", args("ref", refOf(t, text, "button", "Log"), "action", "click"))
	last := ""
	fixture.WaitUntil(t, "the popup's console error", func() bool {
		_, sc := must(t, cs, "browser_console", args("since", 0))
		msgs, _ = sc["messages"].([]any)
		if s := fmt.Sprint(sc); s != last {
			t.Logf("console of the popup: %s", s)
			last = s
		}
		return len(msgs) > 0 && msgs[len(msgs)-1].(map[string]any)["text"] == "popup error" && sc["tab"] == "t3"
	})

	// The popup closes itself: the tools fall back to t1, used before it.
	must(t, cs, "browser_act", args("ref", refOf(t, text, "button", "Close me"), "action", "click"))
	fixture.WaitUntil(t, "the closed popup gone", func() bool {
		_, sc = must(t, cs, "browser_tabs", args())
		ids, _ := tabIDs(sc)
		return joined(ids) == "t1 t2"
	})
	if _, cur := tabIDs(sc); cur != "t1" {
		t.Errorf("after t3 closed itself the current tab is %q; want t1", cur)
	}

	// open: a new current tab at a URL; close of the current falls back.
	text, sc = must(t, cs, "browser_tabs", args("action", "open", "url", base+"/scroll"))
	if ids, cur := tabIDs(sc); joined(ids) != "t1 t2 t4" || cur != "t4" || sc["status"] != float64(200) || !strings.Contains(text, "# Scroll") {
		t.Fatalf("open: %v current %q status %v\n%s", ids, cur, sc["status"], text)
	}
	_, sc = must(t, cs, "browser_tabs", args("action", "close"))
	if ids, cur := tabIDs(sc); joined(ids) != "t1 t2" || cur != "t1" {
		t.Errorf("close of t4: %v current %q; want t1 t2, t1 current", ids, cur)
	}
	must(t, cs, "browser_tabs", args("action", "close", "tab", "t2"))
	snap, _ = must(t, cs, "browser_snapshot", args())
	if !strings.Contains(snap, "# Tabs") {
		t.Errorf("snapshot after closing t2 is not of t1:\n%s", snap)
	}
	refuses(t, cs, "browser_tabs", args("action", "switch", "tab", "t9"), "INVALID_PARAMETER", "tab")
	refuses(t, cs, "browser_tabs", args("action", "switch"), "INVALID_PARAMETER", "tab")
	refuses(t, cs, "browser_tabs", args("action", "shuffle"), "INVALID_PARAMETER", "action")
	refuses(t, cs, "browser_tabs", args("action", "open", "url", "file:///etc/passwd"), "INVALID_PARAMETER", "url")
	refuses(t, cs, "browser_tabs", args("action", "open", "url", denied.URL+"/"), "INVALID_PARAMETER", "url")
	refuses(t, cs, "browser_console", args("limit", 500), "INVALID_PARAMETER", "limit")
	if _, sc := must(t, cs, "browser_tabs", args()); joined(func() []string { ids, _ := tabIDs(sc); return ids }()) != "t1" {
		t.Errorf("refused calls changed the tabs: %v", sc["tabs"])
	}
}
