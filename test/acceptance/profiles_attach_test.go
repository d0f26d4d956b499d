package acceptance

// Issue 31, acceptance 5: attaching to a Chromium the person started with
// remote debugging (--browser http://127.0.0.1:PORT --browser-context
// default) runs a template in a new tab of the person's own context and
// leaves their tabs open and untouched, during the run and after the
// daemon stops.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// cdpTab is one entry of Chromium's /json/list.
type cdpTab struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// cdpPages lists the page targets of the Chromium at base (http://host:port),
// sorted by id.
func cdpPages(t *testing.T, base string) []cdpTab {
	t.Helper()
	resp, err := http.Get(base + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []cdpTab
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	var pages []cdpTab
	for _, tb := range all {
		if tb.Type == "page" {
			pages = append(pages, tb)
		}
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].ID < pages[j].ID })
	return pages
}

func TestBlackboxAttachToPersonsChrome(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	ws := startCDPChromium(t)
	u, err := url.Parse(ws)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + u.Host
	// The person's own tab, open on a page before browsertask attaches.
	own := fx.URL("/storage")
	req, _ := http.NewRequest(http.MethodPut, base+"/json/new?"+own, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fixture.WaitUntil(t, "the person's tab loaded", func() bool {
		for _, p := range cdpPages(t, base) {
			if p.URL == own {
				return true
			}
		}
		return false
	})
	before := cdpPages(t, base)

	srv := startServe(t, "--browser", base, "--browser-context", "default")
	cs := connectHTTP(t, srv, nil)
	res := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "options": obj{"mode": "sync"},
		"inputs": obj{"urls": []any{fx.URL("/login")}, "fields": obj{"button": "#signin"}}})
	if res["status"] != "succeeded" {
		t.Fatalf("run: %v %v", res["status"], res["error"])
	}
	if b := sub(res, "result")["pages"].([]any)[0].(obj)["fields"].(obj)["button"]; b != "Sign in" {
		t.Fatalf("the run's page: button %v, want Sign in", b)
	}
	check := func(when string) {
		t.Helper()
		after := cdpPages(t, base)
		if len(after) != len(before) {
			t.Fatalf("%s: tabs %+v, want the person's %+v", when, after, before)
		}
		for i := range before {
			if after[i].ID != before[i].ID || after[i].URL != before[i].URL {
				t.Fatalf("%s: tab %d is %+v, was %+v", when, i, after[i], before[i])
			}
		}
	}
	// The run's tab is closed when its session ends (right after the run).
	fixture.WaitUntil(t, "the run's tab closed", func() bool { return len(cdpPages(t, base)) == len(before) })
	check("after the run")
	srv.stop(10 * time.Second)
	check("after the daemon stopped")
	if strings.Contains(srv.log(), "level=ERROR") {
		t.Fatalf("errors in the daemon's log:\n%s", srv.logTail(30))
	}
}
