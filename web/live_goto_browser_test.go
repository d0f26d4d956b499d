package web_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestAddressBarInTakeover (issue 31): during the takeover of a profile's
// sign-in run the live view has an address bar; the person types the
// address of a second fixture site, presses Go, and the run's tab is
// there (the live view's URL and the browser's own tab list say so). A
// file: URL, which this process's policy refuses, is answered with the
// reason beside the bar and the tab stays where it was.
func TestAddressBarInTakeover(t *testing.T) {
	fixture.NeedChromium(t)
	dbPath := filepath.Join(t.TempDir(), "bt.db")
	site, other := fixture.New(t), fixture.New(t)
	d := startProfileDaemon(t, dbPath)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 1100, 1, false)

	page.MustNavigate(d.srv.URL + "/profiles").MustWaitLoad()
	page.MustElement("#profile-name").MustInput("bar")
	page.MustElement("#profile-url").MustInput(site.URL("/login"))
	clickOn(t, page, "#profile-create")
	until(t, page, "the address bar of the takeover", `() => !!document.querySelector('#live .live-tab[data-closed="false"] .live-goto-url')`, 90*time.Second)
	runID := strings.TrimPrefix(strings.SplitN(page.MustInfo().URL, "#", 2)[0], d.srv.URL+"/runs/")

	target := other.URL("/login")
	page.MustElement("#live .live-goto-url").MustSelectAllText().MustInput(target)
	clickOn(t, page, "#live .live-goto-go")
	until(t, page, "the second site in the live view", `() => { const u = document.querySelector('#live .live-tab .live-url'); return !!u && u.textContent === `+jsString(target)+` }`, 30*time.Second)
	tabs := d.bm.LiveTabs(ctx, runID)
	if len(tabs) != 1 || tabs[0].URL != target {
		t.Fatalf("run tabs %+v, want one at %s", tabs, target)
	}

	page.MustElement("#live .live-goto-url").MustSelectAllText().MustInput("file:///etc/passwd")
	clickOn(t, page, "#live .live-goto-go")
	until(t, page, "the refusal beside the bar", `() => !!document.querySelector('#live .live-goto-refused')`, 30*time.Second)
	msg := text(t, page, `() => document.querySelector('#live .live-goto-refused').textContent`)
	if !strings.Contains(msg, "file: URLs are disabled") || !strings.Contains(msg, "--allow-file-urls") {
		t.Fatalf("refusal %q, want the file: URL policy's reason", msg)
	}
	if tabs := d.bm.LiveTabs(ctx, runID); len(tabs) != 1 || tabs[0].URL != target {
		t.Fatalf("after the refusal, run tabs %+v, want one still at %s", tabs, target)
	}
}
