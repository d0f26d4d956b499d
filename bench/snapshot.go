package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// snapshotPages is how many pages scenario 16 reads, half from the Python
// manual and half from go-trafilatura's saved web pages.
const snapshotPages = 50

// snapshotRow is one page of scenario 16.
type snapshotRow struct {
	URL                  string
	Ours, Theirs, TheirY int // tokens: our snapshot, their whole answer, their YAML alone
	Controls, Missing    int
}

// snapshotResult is scenario 16's outcome.
type snapshotResult struct {
	Rows                          []snapshotRow
	MedianOurs, MedianTheirs      float64
	MedianRatio, MedianRatioYAML  float64
	Controls, Missing, TheirFails int
	Elapsed                       time.Duration
}

// benchSnapshot compares browsertask's page snapshot with @playwright/mcp's
// browser_snapshot (pinned in e2e/package.json, driven through the
// TypeScript SDK by e2e/lib/playwright_snapshots.mjs) on the same pages of
// the real corpora served on loopback, both Chromiums resolving no name but
// 127.0.0.1 and localhost. Tokens are ceil(bytes/4) of the text a model
// reads, for both. It also counts the page's visible controls that our
// snapshot lacks a reference for (snapshot.Missing).
func benchSnapshot(ctx context.Context, out io.Writer) (*snapshotResult, error) {
	start := time.Now()
	var urls []string
	for _, name := range []string{fixture.CorpusPython, fixture.CorpusTrafilatura} {
		dir, err := fixture.LocateCorpus(name)
		if err != nil {
			fmt.Fprintf(out, "  skipped: %v\n", err)
			continue
		}
		pages, err := fixture.CorpusPages(dir)
		if err != nil {
			return nil, err
		}
		srv, err := fixture.StartCorpus(dir)
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		for _, p := range fixture.SamplePages(pages, snapshotPages/2) {
			urls = append(urls, srv.URL()+"/"+p)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("no corpus installed (see internal/fixture/corpus.go)")
	}
	theirs, err := playwrightSnapshots(ctx, urls)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "browsertask-bench-snapshot-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	m := browser.NewManager(browser.Options{TempDir: tmp, ExtraArgs: []string{fixture.LoopbackResolverRules}})
	defer m.Close()
	s, err := m.Session(ctx, "bench-snapshot")
	if err != nil {
		return nil, err
	}
	res := &snapshotResult{}
	var ratios, ratiosY, ours, their []float64
	for _, u := range urls {
		row, err := ourSnapshot(ctx, s, u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		t, ok := theirs[u]
		if !ok || t.Error != "" {
			res.TheirFails++
			fmt.Fprintf(out, "  @playwright/mcp failed on %s: %s\n", u, t.Error)
			continue
		}
		row.Theirs, row.TheirY = snapshot.Tokens(t.Text), snapshot.Tokens(t.Snapshot)
		res.Rows = append(res.Rows, row)
		res.Controls += row.Controls
		res.Missing += row.Missing
		ratios = append(ratios, float64(row.Ours)/float64(max(row.Theirs, 1)))
		ratiosY = append(ratiosY, float64(row.Ours)/float64(max(row.TheirY, 1)))
		ours = append(ours, float64(row.Ours))
		their = append(their, float64(row.Theirs))
	}
	res.MedianRatio, res.MedianRatioYAML = median(ratios), median(ratiosY)
	res.MedianOurs, res.MedianTheirs = median(ours), median(their)
	res.Elapsed = time.Since(start)
	fmt.Fprintf(out, "  %d pages: median tokens ours %.0f, @playwright/mcp %.0f; median ratio %.3f (%.3f against their YAML alone); controls %d, without a reference %d (%s)\n",
		len(res.Rows), res.MedianOurs, res.MedianTheirs, res.MedianRatio, res.MedianRatioYAML, res.Controls, res.Missing, res.Elapsed.Round(time.Second))
	if len(ratios) > 0 {
		fmt.Fprintf(out, "  ratio per page: lowest %.3f, highest %.3f; largest snapshot ours %.0f tokens, theirs %.0f\n",
			slices.Min(ratios), slices.Max(ratios), slices.Max(ours), slices.Max(their))
	}
	return res, nil
}

// ourSnapshot loads u in a tab of s and measures our snapshot of it.
func ourSnapshot(ctx context.Context, s *browser.Session, u string) (snapshotRow, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		return snapshotRow{}, err
	}
	defer tb.Release(false)
	if _, err := tb.Navigate(ctx, u, "load"); err != nil {
		return snapshotRow{}, err
	}
	refs := snapshot.NewRefs()
	snap, err := snapshot.Take(ctx, tb.Page(), refs, snapshot.Options{})
	if err != nil {
		return snapshotRow{}, err
	}
	total, missing, err := snapshot.Missing(ctx, tb.Page(), refs, snap.Text)
	if err != nil {
		return snapshotRow{}, err
	}
	for _, m := range missing {
		fmt.Fprintf(os.Stderr, "snapshot: no reference on %s for %s\n", u, m)
	}
	return snapshotRow{URL: u, Ours: snap.Tokens, Controls: total, Missing: len(missing)}, nil
}

// playwrightAnswer is one line of e2e/lib/playwright_snapshots.mjs.
type playwrightAnswer struct {
	URL, Text, Snapshot, Error string
}

// playwrightSnapshots runs the e2e script on urls and returns its answers
// by URL. It needs `npm ci` in e2e/.
func playwrightSnapshots(ctx context.Context, urls []string) (map[string]playwrightAnswer, error) {
	script := filepath.Join("e2e", "lib", "playwright_snapshots.mjs")
	if _, err := os.Stat(filepath.Join("e2e", "node_modules", "@playwright", "mcp")); err != nil {
		return nil, fmt.Errorf("@playwright/mcp is not installed: run npm ci in e2e/ (from the repository root)")
	}
	cmd := exec.CommandContext(ctx, "node", script, fixture.ChromiumPath, fixture.LoopbackResolverRules)
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	cmd.Stderr = os.Stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w", script, err)
	}
	got := map[string]playwrightAnswer{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var a playwrightAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("%s: %w", script, err)
		}
		got[a.URL] = a
	}
	return got, sc.Err()
}
