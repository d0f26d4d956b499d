package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// The hostile-web sweep (issue 9): every template runs end to end, through
// a real engine with its SQLite store, over the corpus of
// fixture.NewHostile (cross-site frames, workers, sockets, popups,
// dialogs, redirect chains and loops, a renderer stuck in a loop or out of
// memory, hanging and slow sub-resources, odd charsets, broken HTML, error
// statuses, a self-signed certificate), under trust local and under trust
// restricted. A run must end; every page must end as a result or as an
// error carrying one of the contract's 16 codes; counts are exact; pages
// whose outcome is certain are checked exactly (except that a page
// deadline may pass on the shared, overloaded machine: see outcomes);
// afterwards the same daemon still extracts a normal page correctly.
// Under restricted, no request of any channel (img, frame, fetch, beacon,
// prefetch, workers, WebSocket, popup) may reach a loopback address, while
// under local the same probes do (the control).

// sweepPageTimeoutMs is the per-page deadline of the sweep: almost 4x the
// slow sub-resource (800 ms) and 15x the nested frames (200 ms) so a
// loaded 2-core machine still loads them, short enough that the pages
// that never load (busy loop, hanging sub-resource, dialogs) do not
// dominate the wall time; doubled under -race.
const sweepPageTimeoutMs = 3000 * sweepSlowdown

// sweepConcurrency is the tabs per page-template run.
const sweepConcurrency = 6

// sweepRunWait is how long a run may go without progress before the
// sweep calls it a hang, reported with the pages not done. A run that
// keeps checkpointing is waited for however long a loaded machine makes
// it take (at load 90 a run_steps flow took over 90 s, moving all along).
const sweepRunWait = 90 * time.Second

func TestHostileSweepLocal(t *testing.T) { hostileSweep(t, "local") }

func TestHostileSweepRestricted(t *testing.T) { hostileSweep(t, "restricted") }

// hostileSweep runs every template over the corpus under trust, then
// checks the daemon still works and (restricted) that nothing leaked.
func hostileSweep(t *testing.T, trust string) {
	testManager(t) // skips without Chromium
	t.Parallel()   // the two trust levels use separate browsers and corpora
	start := time.Now()
	h := fixture.NewHostile(t)
	s := newSweep(t, h, trust)
	t.Run("batch_extract_pages", s.batch)
	t.Run("screenshot_pages", func(t *testing.T) { s.capture(t, "screenshot_pages", "screenshots") })
	t.Run("save_pdf", func(t *testing.T) { s.capture(t, "save_pdf", "pdfs") })
	t.Run("crawl_site", s.crawl)
	t.Run("login", s.login)
	t.Run("run_steps", s.runSteps)
	t.Run("still_works", s.stillWorks)
	seen := map[string]bool{}
	for _, l := range s.logs.lines() {
		// Panics in browser event handlers are contained and logged; any
		// is a defect even when the page ended with a coded error.
		if strings.Contains(l, "internal error") || strings.Contains(l, "panic") {
			t.Errorf("contained panic during the sweep: %s", l)
		}
		if !seen[l] && testing.Verbose() {
			seen[l] = true
			t.Logf("daemon log: %s", l)
		}
	}
	s.checkProbes(t)
	t.Logf("%s sweep: %s wall time", trust, time.Since(start).Round(time.Millisecond))
}

// sweep is a daemon wired as `browsertask serve` wires it (store, browser
// manager, all templates, engine loop), under one trust level.
type sweep struct {
	trust   string
	hostile *fixture.Hostile
	public  bool // the corpus is addressed by its public names
	eng     *engine.Engine
	logs    *logRecorder
	// swept is set once a page template went through the whole corpus,
	// which is what makes the probes of the local control fire; a run of
	// some subtests only (go test -run 'TestHostileSweepLocal/run_steps')
	// checks only what those visited.
	swept bool
}

// newSweep starts the daemon under trust ("local" or "restricted"). Under
// restricted the corpus is reached through its public names: they resolve
// to TEST-NET addresses in a fixture.PublicNet (Options.Resolve, used by
// the submission check, the in-browser check and the egress proxy) and
// the proxy connects them to the sites' loopback listeners (Options.Dial).
func newSweep(t *testing.T, h *fixture.Hostile, trust string) *sweep {
	t.Helper()
	dir := t.TempDir()
	store, err := db.Open(context.Background(), filepath.Join(dir, "sweep.db"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	log := slog.New(logs)
	opts := browser.Options{
		TempDir: dir, TrustLevel: trust, Logger: log.With("component", "browser"),
		// The memory hog dies at a 256 MB heap instead of several GB: the
		// machine is shared.
		ExtraArgs: []string{"--js-flags=--max-old-space-size=256"},
	}
	s := &sweep{trust: trust, hostile: h, logs: logs}
	if trust == "restricted" {
		s.public = true
		pn, dial := h.PublicNet()
		opts.Resolve, opts.Dial = pn.Resolve, dial
		// Service workers need a secure context; the public names are
		// plain http, so site B is declared one (as localhost is).
		opts.ExtraArgs = append(opts.ExtraArgs, "--unsafely-treat-insecure-origin-as-secure="+h.SiteBase(fixture.SiteB, true))
	}
	bm := browser.NewManager(opts)
	cfg := engine.Config{TrustLevel: trust, PollInterval: 50 * time.Millisecond, ShutdownGrace: time.Second}
	s.eng, err = engine.New(engine.Options{Store: store, Templates: All(bm, nil), Browser: bm,
		Config: cfg, Logger: log.With("component", "engine")})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.eng.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := bm.Close(); err != nil {
			t.Errorf("close browser: %v", err)
		}
		store.Close()
	})
	return s
}

// corpus returns the corpus in this sweep's view.
func (s *sweep) corpus() map[string]string {
	if s.public {
		return s.hostile.PublicCorpus()
	}
	return s.hostile.Corpus()
}

// url returns path on site in this sweep's view.
func (s *sweep) url(site int, path string) string { return s.hostile.SiteURL(site, s.public, path) }

// urls returns the corpus URLs in name order and the name of each URL.
func (s *sweep) urls() ([]string, map[string]string) {
	c := s.corpus()
	var urls []string
	names := map[string]string{}
	for _, n := range fixture.CorpusNames() {
		urls = append(urls, c[n])
		names[c[n]] = n
	}
	return urls, names
}

// run submits a template run (async) and waits for it to end; a run
// whose progress did not change for sweepRunWait fails the test as a
// hang, naming the URLs (inputs.urls) not done.
func (s *sweep) run(t *testing.T, templateID, sessionID string, inputs map[string]any) *engine.Run {
	t.Helper()
	raw, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: templateID, SessionID: sessionID,
		Inputs: raw, Mode: engine.ModeAsync, TimeoutMs: 300000})
	if err != nil {
		t.Fatalf("submit %s: %v", templateID, err)
	}
	var (
		r    *engine.Run
		last engine.Progress
	)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), sweepRunWait)
		r, err = s.eng.Wait(ctx, sub.Run.RunID, nil)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
		cur, gerr := s.eng.Get(context.Background(), sub.Run.RunID)
		if gerr != nil || cur.Progress == last {
			break
		}
		last = cur.Progress // still moving
	}
	if err != nil {
		cur, _ := s.eng.Get(context.Background(), sub.Run.RunID)
		var pending []string
		if urls, ok := inputs["urls"].([]string); ok {
			done := s.items(t, sub.Run.RunID)
			for _, u := range urls {
				if _, ok := done[u]; !ok {
					pending = append(pending, u)
				}
			}
		}
		t.Fatalf("%s: run %s made no progress for %s (hang): %v; progress %+v; pages not done: %v",
			templateID, sub.Run.RunID, sweepRunWait, err, cur.Progress, pending)
	}
	if !r.Status.Terminal() {
		t.Fatalf("%s: Wait returned the non-terminal status %s", templateID, r.Status)
	}
	if r.Error != nil {
		checkCoded(t, templateID+" run", r.Error)
	}
	return r
}

// items returns the run's checkpoints keyed by item key (the URL).
func (s *sweep) items(t *testing.T, runID string) map[string]engine.Item {
	t.Helper()
	its, err := s.eng.Items(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]engine.Item{}
	for _, it := range its {
		if _, dup := out[it.Key]; dup {
			t.Errorf("item %s checkpointed twice", it.Key)
		}
		out[it.Key] = it
	}
	return out
}

// sweepPage is the union of the per-page entries of the page templates'
// results (batch and crawl pages, screenshots, pdfs).
type sweepPage struct {
	URL        string         `json:"url"`
	FinalURL   string         `json:"finalUrl"`
	HTTPStatus int            `json:"httpStatus"`
	Title      string         `json:"title"`
	Fields     map[string]any `json:"fields"`
	ArtifactID string         `json:"artifactId"`
	Size       int64          `json:"size"`
	Depth      int            `json:"depth"`
	Error      *engine.Error  `json:"error"`
}

// code is the page's error code, "" when it succeeded.
func (p sweepPage) code() engine.ErrorCode {
	if p.Error == nil {
		return ""
	}
	return p.Error.Code
}

// checkCoded fails the test unless e is a complete contract error object
// with one of the 16 codes.
func checkCoded(t *testing.T, what string, e *engine.Error) {
	t.Helper()
	if e == nil {
		return
	}
	if !slices.Contains(engine.AllErrorCodes, e.Code) || e.Message == "" || e.Recovery == "" {
		t.Errorf("%s: error %+v is not a coded contract error", what, e)
	}
}

// expectation is what a corpus page certainly ends as, whatever the
// template: one of codes ("" = loaded), and when it loaded or failed on
// its status, that HTTP status and title. Pages not listed may end either
// way, with a coded error.
type expectation struct {
	codes  []engine.ErrorCode
	status int
	title  string
}

// expectations returns the certain outcomes in this sweep's trust level.
// Pages whose outcome depends on timing are not listed (huge-dom may miss
// the deadline on a loaded machine; meta-refresh may be captured on either
// document; memory-hog crashes or times out), nor the dialog pages, which
// tests of their own check: login-dialogs logs in or times out, coded
// (sweep.login), and dialogs loads once its dialogs are answered
// (TestHostileStuckTabNotReused).
func (s *sweep) expectations() map[string]expectation {
	ok := []engine.ErrorCode{""}
	failed := []engine.ErrorCode{engine.StepExecutionFailed}
	e := map[string]expectation{
		"plain":            {codes: ok, status: 200, title: "Page 1"},
		"nested-frames":    {codes: ok, status: 200, title: "Nest 0"},
		"sandboxed-frame":  {codes: ok, status: 200, title: "Sandboxed frames"},
		"srcdoc-frame":     {codes: ok, status: 200, title: "Srcdoc frame"},
		"dedicated-worker": {codes: ok, status: 200, title: "Dedicated worker"},
		"shared-worker":    {codes: ok, status: 200, title: "Shared worker"},
		"service-worker":   {codes: ok, status: 200, title: "Service worker"},
		"websocket":        {codes: ok, status: 200, title: "WebSocket"},
		"popup-on-load":    {codes: ok, status: 200, title: "Popup"},
		"blank-link":       {codes: ok, status: 200, title: "Blank link"},
		"beforeunload":     {codes: ok, status: 200, title: "Before unload"},
		"redirect-chain":   {codes: ok, status: 200, title: "Chain end"},
		"infinite-scroll":  {codes: ok, status: 200, title: "Infinite scroll"},
		"slow-subresource": {codes: ok, status: 200, title: "Slow subresource"},
		"shift-jis-header": {codes: ok, status: 200, title: fixture.TitleShiftJIS},
		"shift-jis-meta":   {codes: ok, status: 200, title: fixture.TitleShiftJIS},
		"cp1252-header":    {codes: ok, status: 200, title: fixture.TitleCP1252},
		"cp1252-meta":      {codes: ok, status: 200, title: fixture.TitleCP1252},
		"broken-html":      {codes: ok, status: 200, title: "Broken page"},
		"empty-200":        {codes: ok, status: 200, title: ""},
		"login-in-frame":   {codes: ok, status: 200, title: "Login in a frame"},
		"status-404":       {codes: failed, status: 404, title: "Status 404"},
		"status-500":       {codes: failed, status: 500, title: "Status 500"},
		"status-503":       {codes: failed, status: 503, title: "Status 503"},
		// Chromium refuses the self-signed certificate
		// (net::ERR_CERT_AUTHORITY_INVALID): a coded page error.
		"tls-self-signed": {codes: failed},
		// net::ERR_TOO_MANY_REDIRECTS after 20 hops, which on a slow
		// machine (-race) may outlast the page deadline.
		"redirect-loop":       {codes: []engine.ErrorCode{engine.StepExecutionFailed, engine.NavigationTimeout}},
		"download":            {codes: failed}, // net::ERR_ABORTED: an attachment is no page
		"busy-loop":           {codes: []engine.ErrorCode{engine.NavigationTimeout}},
		"hanging-subresource": {codes: []engine.ErrorCode{engine.NavigationTimeout}, status: 200, title: "Hanging subresource"},
		"memory-hog":          {codes: []engine.ErrorCode{engine.PageCrashed, engine.NavigationTimeout}},
		"loopback-escape":     {codes: ok, status: 200, title: "Loopback escape"},
	}
	if s.public {
		// Its sub-resources on a loopback address are refused, which fails
		// the page.
		e["loopback-escape"] = expectation{codes: []engine.ErrorCode{engine.TrustLevelNotAllowed}}
		// Their workers' own probes may be refused while they load.
		for _, n := range []string{"shared-worker", "service-worker"} {
			x := e[n]
			x.codes = append(slices.Clone(x.codes), engine.TrustLevelNotAllowed)
			e[n] = x
		}
	}
	return e
}

// probeOwners names the corpus page that makes each probe request of
// fixture.ProbeChannels.
var probeOwners = map[string]string{
	"img": "loopback-escape", "iframe": "loopback-escape", "fetch": "loopback-escape", "beacon": "loopback-escape",
	"prefetch": "loopback-escape", "worker": "loopback-escape", "websocket": "loopback-escape", "popup": "loopback-escape",
	"shared-worker": "shared-worker", "service-worker": "service-worker", "popup-click": "blank-link",
}

// misattributed reports whether page name failed with a refusal of a
// probe another corpus page made. Browser-package defect (issue 9
// report): a request refused by the URL policy is recorded on the tab
// (browser/intercept.go Session.decide → tab.blocked) whichever document
// or child target made it, and the record is cleared only when the next
// navigation starts; a worker, service worker or frame of the previous
// page in a reused tab, still fetching after it moved on, fails the next,
// innocent page with TRUST_LEVEL_NOT_ALLOWED naming the other page's
// request. The sweep tolerates exactly that case (logged), nothing else.
func misattributed(t *testing.T, what, name string, p sweepPage) bool {
	if p.code() != engine.TrustLevelNotAllowed {
		return false
	}
	blocked, _ := p.Error.Details["blockedUrl"].(string)
	_, ch, ok := strings.Cut(blocked, "/h/probe/")
	if !ok || probeOwners[ch] == "" || probeOwners[ch] == name {
		return false
	}
	t.Logf("%s %s: DEFECT (misattributed refusal): failed with the refusal of %s, a request of the %s page", what, name, blocked, probeOwners[ch])
	return true
}

// outcomes checks the pages of one run against their expectations. A
// page deadline can always pass on an overloaded machine (the 2 cores are
// shared), so NAVIGATION_TIMEOUT is tolerated for any page; every other
// outcome must be the expected one, and done fails the run when more than
// half the checked pages only timed out: then something systemic is wrong
// (a stuck tab poisoning the pages after it, say), not the load.
type outcomes struct {
	t        *testing.T
	what     string
	titles   bool // the template reports titles (batch, crawl)
	checked  int
	timedOut []string
}

// check checks one page against its expectation.
func (o *outcomes) check(name string, p sweepPage, exp expectation) {
	t, what := o.t, o.what
	t.Helper()
	checkCoded(t, what+" "+name, p.Error)
	if exp.codes == nil || misattributed(t, what, name, p) {
		return
	}
	o.checked++
	if p.code() == engine.NavigationTimeout && !slices.Contains(exp.codes, engine.NavigationTimeout) {
		o.timedOut = append(o.timedOut, name)
		return
	}
	if !slices.Contains(exp.codes, p.code()) {
		t.Errorf("%s %s: ended with %q (%s), want one of %q", what, name, p.code(), errMsg(p.Error), exp.codes)
		return
	}
	if p.code() == engine.NavigationTimeout && p.HTTPStatus == 0 && exp.status != 0 {
		// A page expected to time out after its document arrived (a
		// subresource that never answers) can time out before the document
		// itself arrives on an overloaded machine: then nothing could be
		// extracted. It counts towards the floor like any other page that
		// only hit the deadline.
		o.timedOut = append(o.timedOut, name)
		return
	}
	if exp.status != 0 && p.HTTPStatus != exp.status {
		t.Errorf("%s %s: httpStatus %d, want %d", what, name, p.HTTPStatus, exp.status)
	}
	// A page failed by a refusal of the URL policy is not extracted.
	if o.titles && exp.status != 0 && p.code() != engine.TrustLevelNotAllowed && p.Title != exp.title {
		t.Errorf("%s %s: title %q, want %q", what, name, p.Title, exp.title)
	}
	if p.code() == engine.StepExecutionFailed && exp.status >= 400 && p.Error.Details["httpStatus"] != float64(exp.status) {
		t.Errorf("%s %s: error details %v, want httpStatus %d", what, name, p.Error.Details, exp.status)
	}
}

// done applies the floor (see outcomes).
func (o *outcomes) done() {
	o.t.Helper()
	if len(o.timedOut) > 0 {
		o.t.Logf("%s: %d of %d checked pages only hit the page deadline (load): %v", o.what, len(o.timedOut), o.checked, o.timedOut)
	}
	if 2*len(o.timedOut) > o.checked {
		o.t.Errorf("%s: %d of %d checked pages hit the page deadline: %v", o.what, len(o.timedOut), o.checked, o.timedOut)
	}
}

// pageSweep runs one of the URL-list templates over the whole corpus and
// checks what every URL-list result must hold: partial_success, one entry
// and one checkpoint per URL in input order, each coded, summary and
// progress counting them exactly. It returns the pages by corpus name.
func (s *sweep) pageSweep(t *testing.T, templateID, listKey string, inputs map[string]any) map[string]sweepPage {
	t.Helper()
	urls, names := s.urls()
	inputs["urls"] = urls
	inputs["perPageTimeoutMs"] = sweepPageTimeoutMs
	inputs["concurrency"] = sweepConcurrency
	s.swept = true
	start := time.Now()
	r := s.run(t, templateID, "", inputs)
	t.Logf("%s (%s): %s in %s", templateID, s.trust, r.Status, time.Since(start).Round(time.Millisecond))
	if r.Status != engine.StatusPartialSuccess {
		t.Fatalf("%s: status %s (error %+v), want partial_success: the corpus has pages that load and pages that fail", templateID, r.Status, r.Error)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: result %s: %v", templateID, r.Result, err)
	}
	var pages []sweepPage
	if err := json.Unmarshal(res[listKey], &pages); err != nil {
		t.Fatalf("%s: result.%s: %v (%s)", templateID, listKey, err, r.Result)
	}
	if len(pages) != len(urls) {
		t.Fatalf("%s: %d pages in the result, want %d", templateID, len(pages), len(urls))
	}
	items := s.items(t, r.RunID)
	if len(items) != len(urls) {
		t.Errorf("%s: %d items checkpointed, want %d", templateID, len(items), len(urls))
	}
	byName := map[string]sweepPage{}
	failed := 0
	for i, p := range pages {
		name := names[p.URL]
		if p.URL != urls[i] || name == "" {
			t.Errorf("%s: page %d is %s, want %s", templateID, i, p.URL, urls[i])
		}
		byName[name] = p
		it := items[p.URL]
		if (p.Error == nil) != (it.Status == engine.ItemSucceeded) {
			t.Errorf("%s %s: item status %s but page error %v", templateID, name, it.Status, p.Error)
		}
		if p.Error != nil {
			failed++
			if it.Error == nil || it.Error.Code != p.Error.Code {
				t.Errorf("%s %s: item error %v, page error %v", templateID, name, it.Error, p.Error)
			}
		}
		if testing.Verbose() {
			t.Logf("  %-20s %-24s http=%d title=%q %s", name, p.code(), p.HTTPStatus, p.Title, errMsg(p.Error))
		}
	}
	var sum batchSummary
	if err := json.Unmarshal(res["summary"], &sum); err != nil || sum != (batchSummary{Total: len(urls), Succeeded: len(urls) - failed, Failed: failed}) {
		t.Errorf("%s: summary %+v (%v), want total %d failed %d", templateID, sum, err, len(urls), failed)
	}
	if r.Progress.DoneSteps != len(urls) || r.Progress.TotalSteps != len(urls) || r.Progress.FailedSteps != failed {
		t.Errorf("%s: progress %+v, want %d/%d with %d failed", templateID, r.Progress, len(urls), len(urls), failed)
	}
	return byName
}

func errMsg(e *engine.Error) string {
	if e == nil {
		return ""
	}
	m := e.Message
	if len(m) > 160 {
		m = m[:160] + "…"
	}
	return m
}

// batch: batch_extract_pages with text, links, meta and fields over the
// corpus; exact outcomes for the pages that have one, pages.json complete.
func (s *sweep) batch(t *testing.T) {
	pages := s.pageSweep(t, "batch_extract_pages", "pages", map[string]any{
		"includeText": true, "includeLinks": true, "includeMeta": true,
		"fields": map[string]any{"name": "#name", "out": "#out",
			"hrefs": map[string]any{"selector": "a", "attr": "href", "all": true}},
	})
	exp := s.expectations()
	o := &outcomes{t: t, what: "batch_extract_pages", titles: true}
	for name, p := range pages {
		o.check(name, p, exp[name])
	}
	o.done()
	if p := pages["redirect-chain"]; p.Error == nil && p.FinalURL != s.url(fixture.SiteB, "/h/chain/0") {
		t.Errorf("redirect-chain ended at %s, want site B's /h/chain/0 after 5 hops", p.FinalURL)
	}
	for _, name := range []string{"shift-jis-header", "shift-jis-meta", "cp1252-header", "cp1252-meta"} {
		if p := pages[name]; p.Error == nil && p.Fields["name"] != p.Title {
			t.Errorf("%s: #name %q, want the decoded title %q", name, p.Fields["name"], p.Title)
		}
	}
	if p := pages["plain"]; p.Error == nil && p.Fields["name"] != "Item 1" { // its failures are judged by check
		t.Errorf("plain: fields %v", p.Fields)
	}
}

// capture: screenshot_pages (full page) or save_pdf over the corpus; a
// page that loaded has a stored artifact of the size reported, a failed
// one none.
func (s *sweep) capture(t *testing.T, templateID, listKey string) {
	inputs := map[string]any{}
	if templateID == "screenshot_pages" {
		inputs["fullPage"] = true
	}
	pages := s.pageSweep(t, templateID, listKey, inputs)
	exp := s.expectations()
	o := &outcomes{t: t, what: templateID}
	defer o.done()
	for name, p := range pages {
		e := exp[name]
		if slices.Contains(e.codes, "") {
			// A page that loads may still fail its capture with a coded
			// error (bounded by the page deadline).
			e.codes = append(slices.Clone(e.codes), engine.StepExecutionFailed)
		}
		o.check(name, p, e)
		if p.Error != nil {
			if p.ArtifactID != "" {
				t.Errorf("%s %s: failed page has artifact %s", templateID, name, p.ArtifactID)
			}
			continue
		}
		a, err := s.eng.Artifact(context.Background(), p.ArtifactID)
		if err != nil || a.Size != p.Size || a.Size == 0 {
			t.Errorf("%s %s: artifact %s: %+v %v (result size %d)", templateID, name, p.ArtifactID, a, err, p.Size)
		}
	}
}

// crawl: crawl_site from the corpus index (depth 0), following every link
// (sameOrigin false) one level deep: exactly the index plus every corpus
// page, each once.
func (s *sweep) crawl(t *testing.T) {
	corpus := s.corpus()
	s.swept = true
	start := time.Now()
	r := s.run(t, "crawl_site", "", map[string]any{
		"startUrl": s.hostile.Index(s.public), "maxDepth": 1, "sameOrigin": false, "maxPages": len(corpus) + 1,
		"perPageTimeoutMs": sweepPageTimeoutMs, "concurrency": sweepConcurrency,
		"fields": map[string]any{"name": "#name"},
	})
	t.Logf("crawl_site (%s): %s in %s", s.trust, r.Status, time.Since(start).Round(time.Millisecond))
	if r.Status != engine.StatusPartialSuccess {
		t.Fatalf("crawl_site: status %s (error %+v), want partial_success", r.Status, r.Error)
	}
	var res struct {
		Summary batchSummary `json:"summary"`
		Pages   []sweepPage  `json:"pages"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != len(corpus)+1 || res.Summary.Total != len(corpus)+1 {
		t.Fatalf("crawl_site: %d pages (summary %+v), want the index and %d corpus pages", len(res.Pages), res.Summary, len(corpus))
	}
	names := map[string]string{}
	for n, u := range corpus {
		names[u] = n
	}
	exp := s.expectations()
	o := &outcomes{t: t, what: "crawl_site", titles: true}
	defer o.done()
	seen := map[string]bool{}
	failed := 0
	for i, p := range res.Pages {
		if p.Error != nil {
			failed++
		}
		if i == 0 {
			if p.URL != s.hostile.Index(s.public) || p.Depth != 0 || p.Error != nil || p.Title != "Hostile corpus" {
				t.Errorf("crawl_site: first page %+v, want the index at depth 0", p)
			}
			continue
		}
		name := names[p.URL]
		if name == "" || seen[name] || p.Depth != 1 {
			t.Errorf("crawl_site: page %d %s (depth %d) is not a corpus page seen once at depth 1", i, p.URL, p.Depth)
			continue
		}
		seen[name] = true
		o.check(name, p, exp[name])
	}
	if res.Summary.Failed != failed || res.Summary.Succeeded != len(res.Pages)-failed {
		t.Errorf("crawl_site: summary %+v, %d pages failed", res.Summary, failed)
	}
	if items := s.items(t, r.RunID); len(items) != len(res.Pages) {
		t.Errorf("crawl_site: %d items, want %d", len(items), len(res.Pages))
	}
}

// login: in one named session, the login form inside a cross-site frame
// cannot be found (TPL_LOGIN_FIELD_NOT_FOUND), the form behind alert and
// confirm dialogs either logs in or times out (coded), and afterwards a
// plain login in the same session succeeds.
func (s *sweep) login(t *testing.T) {
	sess, err := s.eng.CreateSession(context.Background(), engine.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Deadlines: generous where the page loads (they cost nothing then),
	// the sweep's where it never does.
	login := func(url string, pageTimeoutMs int) *engine.Run {
		start := time.Now()
		r := s.run(t, "login", sess.ID, map[string]any{"url": url, "username": fixture.LoginUser, "password": fixture.LoginPassword,
			"timeoutMs": 1000, "successTimeoutMs": 10000, "perPageTimeoutMs": pageTimeoutMs})
		t.Logf("login %s (%s): %s %v in %s", url, s.trust, r.Status, r.Error, time.Since(start).Round(time.Millisecond))
		return r
	}
	if r := login(s.corpus()["login-in-frame"], 10000); r.Status != engine.StatusFailed || r.Error.Code != engine.TplLoginFieldNotFound {
		t.Errorf("login in a cross-site frame: %s %+v, want failed with TPL_LOGIN_FIELD_NOT_FOUND", r.Status, r.Error)
	}
	// Dialogs are never answered today (browser-package defect), so the
	// page never loads; once they are, the login succeeds.
	if r := login(s.corpus()["login-dialogs"], sweepPageTimeoutMs); !(r.Status == engine.StatusSucceeded ||
		r.Status == engine.StatusFailed && r.Error.Code == engine.NavigationTimeout) {
		t.Errorf("login behind dialogs: %s %+v, want succeeded or failed with NAVIGATION_TIMEOUT", r.Status, r.Error)
	}
	r := login(s.url(fixture.SiteC, "/login"), 10000)
	var res struct {
		LoggedIn bool   `json:"loggedIn"`
		FinalURL string `json:"finalUrl"`
	}
	if r.Status != engine.StatusSucceeded || json.Unmarshal(r.Result, &res) != nil || !res.LoggedIn || res.FinalURL != s.url(fixture.SiteC, "/members") {
		t.Errorf("plain login after the hostile ones: %s %s %+v", r.Status, r.Result, r.Error)
	}
}

// runSteps: one flow through several corpus pages (a popup opened by a
// real click, typing, a Shift_JIS page, nested cross-site frames, a
// 5-hop redirect chain, a meta refresh, infinite scroll, screenshots),
// every value exact; then a beforeunload trap, which ends either way but
// coded. The flow's pages all load, so its deadlines are generous (they
// cost nothing then, and the machine may be overloaded).
func (s *sweep) runSteps(t *testing.T) {
	c := s.corpus()
	steps := []map[string]any{
		{"action": "click", "selector": "#pop"},
		{"action": "type", "selector": "#q", "text": "hostile"},
		{"action": "extract", "name": "typed", "selector": "#out"},
		{"action": "click", "selector": "#pop-loopback"},
		{"action": "navigate", "url": c["shift-jis-meta"]},
		{"action": "extract", "name": "sjis", "selector": "#name"},
		{"action": "navigate", "url": c["nested-frames"]},
		{"action": "extract", "name": "nest", "selector": "#name"},
		{"action": "screenshot", "name": "nested", "fullPage": true},
		{"action": "navigate", "url": c["redirect-chain"]},
		{"action": "extract", "name": "chain", "selector": "#name"},
		{"action": "navigate", "url": c["meta-refresh"]},
		{"action": "wait_for", "text": "Landed", "timeoutMs": 10000},
		{"action": "screenshot", "name": "landed"},
		{"action": "navigate", "url": c["infinite-scroll"]},
		{"action": "scroll", "to": "bottom"},
		{"action": "wait_for", "text": "Item 100", "timeoutMs": 10000},
		{"action": "extract", "name": "first", "selector": "#feed li"},
	}
	if !s.public {
		steps = append(steps, map[string]any{"action": "evaluate", "name": "title", "script": "document.title"})
	}
	start := time.Now()
	r := s.run(t, "run_steps", "", map[string]any{"startUrl": c["blank-link"], "steps": steps, "navigationTimeoutMs": 10000})
	t.Logf("run_steps (%s): %s in %s", s.trust, r.Status, time.Since(start).Round(time.Millisecond))
	var res struct {
		Values    map[string]any `json:"values"`
		Artifacts []stepArtifact `json:"artifacts"`
		FinalURL  string         `json:"finalUrl"`
		Steps     int            `json:"steps"`
	}
	if r.Status != engine.StatusSucceeded || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("run_steps: %s %+v %s", r.Status, r.Error, r.Result)
	}
	want := map[string]any{"typed": "typed hostile", "sjis": fixture.TitleShiftJIS, "nest": "Nest 0", "chain": "Chain end", "first": "Item 1"}
	if !s.public {
		want["title"] = "Infinite scroll"
	}
	if fmt.Sprint(res.Values) != fmt.Sprint(want) || res.Steps != len(steps) || res.FinalURL != c["infinite-scroll"] {
		t.Errorf("run_steps: values %v steps %d final %s, want %v, %d, %s", res.Values, res.Steps, res.FinalURL, want, len(steps), c["infinite-scroll"])
	}
	if len(res.Artifacts) != 2 || res.Artifacts[0].Name != "nested" || res.Artifacts[1].Name != "landed" {
		t.Errorf("run_steps: artifacts %+v", res.Artifacts)
	}
	// Not asserted: progress.doneSteps == totalSteps. Engine defect: the
	// last SetProgress calls of a run within 200 ms of the previous one are
	// dropped (engine/env.go runEnv.SetProgress throttle) and nothing
	// writes the final progress, so a succeeded run_steps run keeps an
	// intermediate count (e.g. 15/19).
	if r.Progress.TotalSteps != len(steps)+1 {
		t.Errorf("run_steps: progress %+v, want totalSteps %d", r.Progress, len(steps)+1)
	}

	// beforeunload with a user activation: leaving asks the user to stay.
	// Today nobody answers the dialog, so the navigation times out at
	// step 2; once dialogs are answered it goes on.
	r = s.run(t, "run_steps", "", map[string]any{"startUrl": c["beforeunload"], "navigationTimeoutMs": 10000,
		"steps": []map[string]any{
			{"action": "click", "selector": "#activate"},
			{"action": "wait_for", "text": "activated", "timeoutMs": 10000},
			{"action": "navigate", "url": c["plain"], "timeoutMs": sweepPageTimeoutMs},
			{"action": "extract", "name": "name", "selector": "#name"},
		}})
	t.Logf("run_steps beforeunload (%s): %s %+v", s.trust, r.Status, r.Error)
	switch {
	case r.Status == engine.StatusSucceeded:
	case r.Status == engine.StatusFailed && r.Error.Code == engine.NavigationTimeout && r.Error.Details["stepIndex"] == float64(2):
	default:
		t.Errorf("run_steps beforeunload: %s %+v, want succeeded or NAVIGATION_TIMEOUT at step 2", r.Status, r.Error)
	}
}

// TestHostileStuckTabNotReused: a tab left stuck by a hostile page (a
// renderer in an endless loop, or behind an alert) does not go back to
// the session's pool. Run 1 of a named session ends on the stuck page;
// run 2 in the same session loads an ordinary page. Before Session.Healthy,
// the browser package's reset of the released tab (Page.navigate to
// about:blank) answered, the stuck tab was pooled, and run 2's page
// failed with NAVIGATION_TIMEOUT ("did not answer before the deadline")
// while the looping renderer kept a CPU core busy. One tab per session
// makes run 2 wait for run 1's tab to be released and reset (or closed),
// so it gets that tab if it was pooled.
func TestHostileStuckTabNotReused(t *testing.T) {
	testManager(t) // skips without Chromium
	t.Parallel()
	h := fixture.NewHostile(t)
	m := browser.NewManager(browser.Options{TempDir: t.TempDir(), MaxTabsPerSession: 1})
	t.Cleanup(func() { _ = m.Close() })
	batch := func(sessionID, url string) pageSummary {
		env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{url}, "concurrency": 1, "perPageTimeoutMs": sweepPageTimeoutMs}))
		env.sessionID = sessionID
		ctx, cancel := context.WithTimeout(context.Background(), sweepRunWait)
		defer cancel()
		out, err := NewBatchExtractPages(m).Run(ctx, env)
		if err != nil {
			return pageSummary{URL: url, Error: engine.AsError(err)}
		}
		return out.Result.(batchResult).Pages[0]
	}
	for i, name := range []string{"busy-loop", "dialogs"} {
		sess := "sess_stuck_" + name
		p := batch(sess, h.Corpus()[name])
		switch {
		case name == "dialogs":
			// Dialogs are answered as they open (browser.answerDialog),
			// so the page loads; before, it stalled its tab.
			if p.Error != nil {
				t.Errorf("%s: %+v, want it loaded (its dialogs answered)", name, p)
			}
		case p.Error == nil || p.Error.Code != engine.StepExecutionFailed && p.Error.Code != engine.NavigationTimeout:
			// One page, failed: the run fails with STEP_EXECUTION_FAILED.
			t.Errorf("%s: %+v, want it to fail", name, p)
		}
		want := fmt.Sprintf("Page %d", i+1)
		if p := batch(sess, h.URL(fmt.Sprintf("/page/%d", i+1))); p.Error != nil || p.Title != want {
			t.Errorf("the next run after %s in the same session: title %q error %v, want %q loaded", name, p.Title, p.Error, want)
		}
	}
}

// stillWorks: after the sweep the same daemon extracts a normal page.
func (s *sweep) stillWorks(t *testing.T) {
	u := s.url(fixture.SiteA, "/page/1")
	r := s.run(t, "batch_extract_pages", "", map[string]any{"urls": []string{u}, "fields": map[string]any{"name": "#name"}})
	var res batchResult
	if r.Status != engine.StatusSucceeded || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("a normal page after the sweep: %s %+v", r.Status, r.Error)
	}
	if len(res.Pages) != 1 || res.Pages[0].Title != "Page 1" || res.Pages[0].Fields["name"] != "Item 1" || res.Pages[0].HTTPStatus != 200 {
		t.Fatalf("a normal page after the sweep: %+v", res.Pages)
	}
}

// checkProbes: under restricted no probe reached site C's loopback
// address, by any channel, during the whole sweep. Under local the same
// pages do reach it by the channels that work without timing luck (the
// control that makes the restricted zero mean something), once the page
// templates swept the corpus (s.swept).
func (s *sweep) checkProbes(t *testing.T) {
	for _, ch := range fixture.ProbeChannels {
		n := s.hostile.ProbeHits(ch)
		switch {
		case s.public && n != 0:
			t.Errorf("trust restricted: %d request(s) by %s reached the loopback address", n, ch)
		case !s.public && s.swept && n == 0 && slices.Contains([]string{"img", "iframe", "fetch", "websocket", "popup-click"}, ch):
			t.Errorf("trust local: the %s probe never reached the loopback address: the probe pages do not work", ch)
		case testing.Verbose():
			t.Logf("probe %s: %d request(s) reached the loopback address", ch, n)
		}
	}
}

// logRecorder is a slog.Handler that keeps warnings and errors, so the
// sweep can prove no browser event handler panicked (such panics are
// contained and only logged).
type logRecorder struct {
	mu   sync.Mutex
	recs []string
}

func (l *logRecorder) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.recs...)
}
