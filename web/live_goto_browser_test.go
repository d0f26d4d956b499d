package web_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// TestAddressBarInTakeover (issue 31): during the takeover of a profile's
// sign-in run the live view has an address bar; the person types the
// address of a second fixture site, presses Go, and the run's tab is
// there (the live view's URL and the browser's own tab list say so). A
// file: URL, which this process's policy refuses, is answered with the
// reason beside the bar and the tab stays where it was. Then the person
// presses Done: the sign-in's frames are gone — the open page's live view
// drops its frame, the finished run's page shows none and says why, and
// the browser keeps no last frame of the tab (framesPrivate).
func TestAddressBarInTakeover(t *testing.T) {
	fixture.NeedChromium(t)
	dbPath := filepath.Join(t.TempDir(), "bt.db")
	site, other := fixture.New(t), fixture.New(t)
	d := startProfileDaemon(t, dbPath)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 1100, 1, false)

	page.MustNavigate(d.srv.URL + "/profiles").MustWaitLoad()
	page.MustElement("#profile-name").MustInput("bar")
	page.MustElement("#profile-url").MustInput(site.URL("/login"))
	clickOn(t, page, "#profile-create")
	until(t, page, "the address bar of the takeover", `() => !!document.querySelector('#live .live-tab[data-closed="false"] .live-goto-url')`)
	runID := strings.TrimPrefix(strings.SplitN(page.MustInfo().URL, "#", 2)[0], d.srv.URL+"/runs/")

	target := other.URL("/login")
	goTo(page, target)
	until(t, page, "the second site in the live view", `() => { const u = document.querySelector('#live .live-tab .live-url'); return !!u && u.textContent === `+jsString(target)+` }`)
	tabs := d.bm.LiveTabs(ctx, runID)
	if len(tabs) != 1 || tabs[0].URL != target {
		t.Fatalf("run tabs %+v, want one at %s", tabs, target)
	}

	goTo(page, "file:///etc/passwd")
	until(t, page, "the refusal beside the bar", `() => !!document.querySelector('#live .live-goto-refused')`)
	msg := text(t, page, `() => document.querySelector('#live .live-goto-refused').textContent`)
	if !strings.Contains(msg, "file: URLs are disabled") || !strings.Contains(msg, "--allow-file-urls") {
		t.Fatalf("refusal %q, want the file: URL policy's reason", msg)
	}
	if tabs := d.bm.LiveTabs(ctx, runID); len(tabs) != 1 || tabs[0].URL != target {
		t.Fatalf("after the refusal, run tabs %+v, want one still at %s", tabs, target)
	}

	until(t, page, "a frame of the takeover", `() => (`+frameSrc+`)() !== ''`)
	if f := d.bm.LiveFrame(runID, tabs[0].ID); f == nil {
		t.Fatal("no last frame during the takeover: the check after Done would prove nothing")
	}

	// A redraw of the tabs (the tab's address changes, here sent from the
	// browser's side) keeps what the person is typing in the bar, the
	// focus, and the answer beside it; once the person is not typing, the
	// next redraw shows the tab's address in the bar.
	page.MustEval(`() => {
		const i = document.querySelector('#live .live-goto-url');
		i.focus();
		i.value = 'half-typed';
		i.dispatchEvent(new Event('input', {bubbles: true}));
	}`)
	third := site.URL("/login?again=1")
	if err := d.bm.GoTo(ctx, runID, tabs[0].ID, third); err != nil {
		t.Fatalf("go to %s: %v", third, err)
	}
	until(t, page, "the third address in the live view", `() => document.querySelector('#live .live-tab .live-url').textContent === `+jsString(third))
	bar := text(t, page, `() => {
		const i = document.querySelector('#live .live-goto-url'), r = document.querySelector('#live .live-goto-refused');
		return [i.value, String(document.activeElement === i), r ? 'refusal kept' : 'refusal gone'].join('|');
	}`)
	if bar != "half-typed|true|refusal kept" {
		t.Fatalf("after a redraw the bar is %q, want half-typed|true|refusal kept", bar)
	}
	page.MustEval(`() => document.activeElement.blur()`)
	if err := d.bm.GoTo(ctx, runID, tabs[0].ID, target); err != nil {
		t.Fatalf("go to %s: %v", target, err)
	}
	until(t, page, "the bar showing the tab's address again", `() => document.querySelector('#live .live-goto-url').value === `+jsString(target))

	// The person clicks into the frame to type there; a redraw of the tabs
	// (the tab's address changes) replaces the frame and gives it the
	// focus back, so their next keys still go to the run's browser.
	corner := page.MustEval(`() => { const r = document.querySelector('#live .live-tab .frame').getBoundingClientRect(); return [r.x + 4, r.y + 4] }`).Arr()
	if err := page.Mouse.MoveTo(proto.Point{X: corner[0].Num(), Y: corner[1].Num()}); err != nil {
		t.Fatal(err)
	}
	if err := page.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	until(t, page, "the click into the frame sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
	const frameFocused = `() => String(!!document.activeElement && document.activeElement.matches('#live .live-tab .frame'))`
	if got := text(t, page, frameFocused); got != "true" {
		t.Fatalf("after a click into the frame, the frame has the focus: %s, want true", got)
	}
	if err := d.bm.GoTo(ctx, runID, tabs[0].ID, third); err != nil {
		t.Fatalf("go to %s: %v", third, err)
	}
	until(t, page, "the third address in the live view again", `() => document.querySelector('#live .live-tab .live-url').textContent === `+jsString(third))
	if got := text(t, page, frameFocused); got != "true" {
		t.Fatalf("after a redraw of the tabs, the frame has the focus: %s, want true (the person's next keys would go nowhere)", got)
	}

	pressDone(t, page)
	run, err := d.eng.Wait(ctx, runID, nil)
	if err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("sign-in run: %v %+v", err, run)
	}
	until(t, page, "the live view without frames", `() => !document.querySelector('#live img.shot') && !!document.querySelector('#live .live-note')`)
	page.MustNavigate(d.srv.URL + "/runs/" + runID).MustWaitLoad()
	note := text(t, page, `() => { const n = document.querySelector('#live .live-note'); return n ? n.textContent : '' }`)
	if shots := text(t, page, `() => String(document.querySelectorAll('img.shot').length)`); shots != "0" || !strings.Contains(note, "not kept") {
		t.Fatalf("finished sign-in page: %s frames, note %q; want none and the reason", shots, note)
	}
	if f := d.bm.LiveFrame(runID, tabs[0].ID); f != nil {
		t.Fatalf("the browser still keeps a last frame (seq %d) of the finished sign-in", f.Seq)
	}
}

// goTo types address into the live view's address bar and presses Go in
// one evaluation: the live region is swapped in place as tabs change, so
// an element found in one call may be detached by the next.
func goTo(page *rod.Page, address string) {
	page.MustEval(`(v) => {
		const i = document.querySelector('#live .live-goto-url');
		i.value = v;
		document.querySelector('#live .live-goto-go').click();
	}`, address)
}
