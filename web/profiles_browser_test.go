package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/templates"
	"github.com/browsertask/browsertask/web"
)

// profileDaemon is one in-process daemon on a database: engine, browser
// manager with profiles, dashboard. stop ends it as a daemon's shutdown
// does (engine, then browsers — profile browsers quit cleanly — then the
// database), so a second one on the same file is the daemon restarted.
type profileDaemon struct {
	eng  *engine.Engine
	bm   *browser.Manager
	srv  *httptest.Server
	stop func()
}

func startProfileDaemon(t *testing.T, dbPath string) *profileDaemon {
	t.Helper()
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	log := fixture.Logger(t)
	bm := browser.NewManager(browser.Options{TempDir: t.TempDir(), Logger: log})
	eng, err := engine.New(engine.Options{Store: store, Templates: templates.All(bm, nil), Browser: bm,
		Config: engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
			ProfilesDir: filepath.Join(filepath.Dir(dbPath), "profiles")},
		Logger: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	bm.SetProfiles(eng)
	var dash *web.Dashboard
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { dash.ServeHTTP(w, r) }))
	dash = web.New(web.Options{Engine: eng, Live: bm, DBPath: dbPath, Version: "test", Logger: log})
	eng.SetLiveBase(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	stopped := false
	d := &profileDaemon{eng: eng, bm: bm, srv: srv}
	d.stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		cancel()
		<-done
		_ = bm.Close()
		store.Close()
	}
	t.Cleanup(d.stop)
	return d
}

// extractMembers runs batch_extract_pages on the members page, with or
// without the profile, and returns the page's status and #secret (a run
// whose one page answered 401 fails: 401 and no secret).
func (d *profileDaemon) extractMembers(t *testing.T, site *fixture.Server, profile string) (int, any) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"urls": []string{site.URL("/members")}, "fields": map[string]string{"secret": "#secret"}})
	ctx, cancel := fixture.Context(t)
	defer cancel()
	res, err := d.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "batch_extract_pages", Profile: profile, Inputs: in, Mode: engine.ModeAsync})
	if err != nil {
		t.Fatalf("submit with profile %q: %v", profile, err)
	}
	run, err := d.eng.Wait(ctx, res.Run.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Profile != profile {
		t.Fatalf("run.Profile %q, want %q", run.Profile, profile)
	}
	if run.Status == engine.StatusFailed && run.Error != nil && strings.Contains(run.Error.Message, "answered HTTP 401") {
		return 401, nil
	}
	var out struct {
		Pages []struct {
			HTTPStatus int            `json:"httpStatus"`
			Fields     map[string]any `json:"fields"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(run.Result, &out); err != nil || len(out.Pages) != 1 {
		t.Fatalf("run %s result %s (%v) error %+v", run.Status, run.Result, err, run.Error)
	}
	return out.Pages[0].HTTPStatus, out.Pages[0].Fields["secret"]
}

// pasteInto sends text to the focused live frame as the person's paste.
func pasteInto(t *testing.T, p *rod.Page, s string) {
	t.Helper()
	if _, err := p.Eval(`(s) => { const dt = new DataTransfer(); dt.setData('text/plain', s);
		document.activeElement.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true})) }`, s); err != nil {
		t.Fatal(err)
	}
	until(t, p, "the paste sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
}

// pressKey sends one key to the focused live frame.
func pressKey(t *testing.T, p *rod.Page, k input.Key) {
	t.Helper()
	if err := p.Keyboard.Type(k); err != nil {
		t.Fatal(err)
	}
	until(t, p, "the key sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
}

// TestProfileSignInThroughDashboard (issue 31, acceptance 1): a person
// creates profile "work" on the dashboard's Profiles page, signs into the
// fixture login site by hand in the live view (a click into the frame,
// Tab, the user name, Tab, the password, Enter — the page's own form),
// presses Done; the daemon restarts; batch_extract_pages with profile
// "work" reads the members page (200, the secret), without it gets 401.
// The profile lists the site it holds cookies for, by name only.
func TestProfileSignInThroughDashboard(t *testing.T) {
	fixture.NeedChromium(t)
	dbPath := filepath.Join(t.TempDir(), "bt.db")
	site := fixture.New(t)
	d := startProfileDaemon(t, dbPath)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page := launchChromium(t).MustPage("").Context(ctx)
	page.MustSetViewport(1280, 1100, 1, false)

	page.MustNavigate(d.srv.URL + "/profiles").MustWaitLoad()
	page.MustElement("#profile-name").MustInput("work")
	page.MustElement("#profile-note").MustInput("the fixture site")
	page.MustElement("#profile-url").MustInput(site.URL("/login"))
	clickOn(t, page, "#profile-create")
	until(t, page, "the sign-in run's takeover", `() => !!document.querySelector('#run-ask .question[data-kind="takeover"] #takeover-done')`)
	until(t, page, "the live frame in control mode", `() => document.querySelector('#live .live-tabs').dataset.control === 'true' && (`+frameSrc+`)() !== ''`)
	if got := text(t, page, `() => { const e = document.querySelector('#run-profile'); return e ? e.textContent : '' }`); got != "work" {
		t.Fatalf("run page profile %q, want work", got)
	}
	runID := strings.TrimPrefix(strings.SplitN(page.MustInfo().URL, "#", 2)[0], d.srv.URL+"/runs/")

	// Focus the frame with a click on the page's empty top-left corner.
	res, err := page.Eval(`() => { const r = document.querySelector('#live .live-tab .frame img.shot').getBoundingClientRect(); return [r.x, r.y] }`)
	if err != nil {
		t.Fatal(err)
	}
	box := res.Value.Arr()
	if err := page.Mouse.MoveTo(proto.Point{X: box[0].Num() + 4, Y: box[1].Num() + 4}); err != nil {
		t.Fatal(err)
	}
	if err := page.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	until(t, page, "the click sent", `() => !document.querySelector('#live .live-tab[data-sending]')`)
	pressKey(t, page, input.Tab)
	pasteInto(t, page, fixture.LoginUser)
	pressKey(t, page, input.Tab)
	pasteInto(t, page, fixture.LoginPassword)
	pressKey(t, page, input.Enter)
	until(t, page, "the members page in the live view", `() => { const u = document.querySelector('#live .live-tab .live-url'); return !!u && u.textContent.endsWith('/members') }`)
	pressDone(t, page)
	run, err := d.eng.Wait(ctx, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != engine.StatusSucceeded || !strings.Contains(string(run.Result), `/members"`) {
		t.Fatalf("sign-in run %s: %s %+v", run.Status, run.Result, run.Error)
	}

	d.stop()
	d = startProfileDaemon(t, dbPath)
	list, err := d.eng.Profiles(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "work" || list[0].Note != "the fixture site" ||
		strings.Join(list[0].Sites, ",") != "127.0.0.1" || list[0].SizeBytes == 0 || list[0].LastUsedAt == 0 {
		t.Fatalf("profiles %+v (%v), want work holding 127.0.0.1", list, err)
	}
	if status, secret := d.extractMembers(t, site, "work"); status != 200 || secret != "members-only-42" {
		t.Fatalf("with profile work: status %d, secret %v; want 200 members-only-42", status, secret)
	}
	if status, secret := d.extractMembers(t, site, ""); status != 401 || secret != nil {
		t.Fatalf("without a profile: status %d, secret %v; want 401 and none", status, secret)
	}
}
