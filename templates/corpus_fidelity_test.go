//go:build corpora

package templates

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fidelity"
	"github.com/browsertask/browsertask/internal/fixture"
)

// corpusSamplePages is how many pages of each corpus the test compares,
// spread evenly over the corpus (fixture.SamplePages): the same pages on
// every run. `go run ./bench -only fidelity` compares every page.
const corpusSamplePages = 30

// corpusFloors are, per corpus and aspect, the share of the sample's
// pages both paths finished that is equal, as measured, less one page
// where the goal (fidelity.Thresholds) would leave no slack or is not
// reached: a floor that fails a change reading fewer pages alike, with
// one page of slack for a loaded machine. Measured with `go test -tags
// corpora -run TestCorpusFidelitySample -v ./templates/` (2026-11-27,
// after the charset, URL, :is()/:where() and form-control fixes):
// python3-doc text 25/30 with script-generated content excused (the rest:
// css-hidden rules the HTTP path cannot match), trafilatura title 30/30,
// text 29/30, links 30/30. Raise them as the text rule improves.
var corpusFloors = map[string]map[string]float64{
	fixture.CorpusPython:      {fidelity.AspectText: 24.0 / 30},
	fixture.CorpusTrafilatura: {fidelity.AspectTitle: 29.0 / 30, fidelity.AspectText: 28.0 / 30, fidelity.AspectLinks: 29.0 / 30},
}

// TestCorpusFidelitySample runs batch_extract_pages with render "browser"
// and render "http" on a fixed sample of every corpus (real documentation
// sites from Debian and go-trafilatura's saved web pages, served on
// loopback; Chromium resolves no other host) and holds the share of pages
// equal on both paths to the thresholds (fidelity.MinTitleEqual,
// MinLinksEqual, MinTextEqual), or to the sample's floor (corpusFloors)
// where the goal is not reached yet; the gap to the goal is logged. On the documentation sites, differences
// that are only content written by the site's scripts (Doxygen's menu) are
// excused: the HTTP path cannot read them by design, and render "auto" is
// what must notice them. A miss names the corpus, the aspect and the
// classes of the differing pages; the test logs every difference.
func TestCorpusFidelitySample(t *testing.T) {
	fixture.NeedChromium(t)
	var (
		once   sync.Once
		tpl    engine.Template
		parent = t
	)
	for _, c := range fixture.Corpora() {
		t.Run(c.Name, func(t *testing.T) {
			dir := fixture.CorpusDir(t, c.Name)
			once.Do(func() { tpl = NewBatchExtractPages(loopbackManager(t, parent)) })
			all, err := fixture.CorpusPages(dir)
			if err != nil {
				t.Fatal(err)
			}
			pages := fixture.SamplePages(all, corpusSamplePages)
			r, err := fidelity.Run(t.Context(), &templateExtractor{t: t, tpl: tpl}, fidelity.Corpus{
				Name: c.Name, Generator: c.Generator, Dir: dir, BaseURL: fixture.ServeCorpus(t, dir), Pages: pages})
			if err != nil {
				t.Fatal(err)
			}
			var report strings.Builder
			r.Print(&report)
			_ = r.WriteDetails(&report)
			t.Log("\n" + report.String())
			if r.Pages != len(pages) || r.FailedBrowser+r.FailedHTTP == 2*r.Pages {
				t.Fatalf("compared %d pages (want %d), failed browser %d http %d", r.Pages, len(pages), r.FailedBrowser, r.FailedHTTP)
			}
			var excused []string
			if c.Name != fixture.CorpusTrafilatura {
				excused = []string{fidelity.ClassScript}
			}
			// The goals, where this sample does not reach them yet,
			// are logged: issue 28 stays open until they hold.
			for _, g := range r.Gaps(excused...) {
				t.Logf("gap to the goal: %s", g)
			}
			// The gate: the goal, or this fixed sample's floor where the
			// goal is not reached yet, so that a change that reads fewer
			// pages alike fails. A page that failed to load on one path
			// (a navigation timeout on a loaded machine) is not a
			// difference of reading; at most two may.
			if failed := r.FailedBrowser + r.FailedHTTP; failed > 2 {
				t.Errorf("%d pages failed to load (browser %d, http %d), at most 2 may", failed, r.FailedBrowser, r.FailedHTTP)
			}
			gated := append([]string{fidelity.ClassPageFailed}, excused...)
			for _, a := range fidelity.Aspects {
				want, ok := fidelity.Thresholds[a]
				if !ok {
					continue
				}
				if f, ok := corpusFloors[c.Name][a]; ok {
					want = f
				}
				if share := r.ShareExcusing(a, gated...); share < want {
					t.Errorf("%s: %s equal on %.1f%% of the %d pages both paths finished, the floor is %.1f%%", c.Name, a, 100*share, r.Finished, 100*want)
				}
			}
		})
	}
}

// loopbackManager is a browser manager of its own for the corpus test,
// whose Chromium resolves no name but 127.0.0.1 and localhost
// (fixture.LoopbackResolverRules): the saved pages name hundreds of outside
// hosts, and nothing may leave the machine. Closed when owner (the test
// whose subtests share it) ends.
func loopbackManager(t, owner *testing.T) *browser.Manager {
	dir, err := os.MkdirTemp("", "templates-corpus-")
	if err != nil {
		t.Fatal(err)
	}
	m := browser.NewManager(browser.Options{TempDir: dir, ExtraArgs: []string{fixture.LoopbackResolverRules}})
	owner.Cleanup(func() {
		_ = m.Close()
		_ = os.RemoveAll(dir)
	})
	return m
}

// templateExtractor runs the batch_extract_pages template itself on a
// fakeEnv for fidelity.Run.
type templateExtractor struct {
	t   *testing.T
	tpl engine.Template
}

// Extract runs one batch and returns its pages.json; pages that failed are
// in it with their error (the run's own error then only says some did).
func (x *templateExtractor) Extract(ctx context.Context, urls []string, render string) ([]fidelity.Page, error) {
	env := newEnv(x.t, mustJSON(x.t, fidelity.Inputs(urls, render, 4)))
	if err := x.tpl.Check(env.inputs, env.profile); err != nil {
		return nil, err
	}
	_, runErr := x.tpl.Run(ctx, env)
	data, _ := env.artifact("pages.json")
	if data == nil {
		return nil, runErr
	}
	return fidelity.DecodePages(data)
}
