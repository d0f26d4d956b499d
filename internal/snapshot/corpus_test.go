//go:build corpora

package snapshot

import (
	"context"
	"testing"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCorpusSnapshotHasEveryControl takes the snapshot of the 50 pages
// `go run ./bench -only snapshot` compares with @playwright/mcp (25 of the
// Python manual, 25 of go-trafilatura's saved web pages, served on
// loopback) and holds each to the page's DOM: every visible link, button
// and form control has a reference in it (Missing).
func TestCorpusSnapshotHasEveryControl(t *testing.T) {
	fixture.NeedChromium(t)
	var urls []string
	for _, name := range []string{fixture.CorpusPython, fixture.CorpusTrafilatura} {
		dir := fixture.CorpusDir(t, name)
		pages, err := fixture.CorpusPages(dir)
		if err != nil {
			t.Fatal(err)
		}
		base := fixture.ServeCorpus(t, dir)
		for _, p := range fixture.SamplePages(pages, 25) {
			urls = append(urls, base+"/"+p)
		}
	}
	m := browser.NewManager(browser.Options{TempDir: t.TempDir(), ExtraArgs: []string{fixture.LoopbackResolverRules}})
	t.Cleanup(func() { _ = m.Close() })
	s, err := m.Session(t.Context(), "corpus-snapshot")
	if err != nil {
		t.Fatal(err)
	}
	controls := 0
	for _, u := range urls {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		tb, err := s.AcquireTab(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Navigate(ctx, u, "load"); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		refs := NewRefs()
		snap, err := Take(ctx, tb.Page(), refs, Options{})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		total, missing, err := Missing(ctx, tb.Page(), refs, snap.Text)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		controls += total
		if len(missing) > 0 {
			t.Errorf("%s: %d of %d controls without a reference, first: %s", u, len(missing), total, missing[0])
		}
		tb.Release(false)
		cancel()
	}
	if len(urls) != 50 || controls < 1000 {
		t.Fatalf("%d pages with %d controls; want 50 pages and the corpora's thousands of controls", len(urls), controls)
	}
	t.Logf("%d pages, %d controls, each with a reference", len(urls), controls)
}
