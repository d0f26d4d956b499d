//go:build corpora

package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCorpusCrawlRepeatable: issue 28 acceptance 4. A
// maxPages 300 crawl of Debian's python3-doc (530 Sphinx pages, served on
// loopback as `python3 -m http.server` serves them) keeps the same pages,
// in the same order and at the same depths, with render browser, http and
// auto, with 1 and 5 tabs, three times each: 18 crawls, one list.
func TestCorpusCrawlRepeatable(t *testing.T) {
	dir := fixture.CorpusDir(t, fixture.CorpusPython)
	base := fixture.ServeCorpus(t, dir)
	m := testManager(t)
	var want []string
	wantFrom := ""
	for _, render := range []string{"http", "auto", "browser"} {
		for _, tabs := range []int{1, 5} {
			for round := range 3 {
				name := fmt.Sprintf("render %s, %d tabs, round %d", render, tabs, round+1)
				env := newEnv(t, mustJSON(t, map[string]any{"startUrl": base + "/index.html", "maxPages": 300,
					"render": render, "concurrency": tabs,
					"fields": map[string]any{"h1": "h1", "h2": map[string]any{"selector": "h2", "all": true}}}))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				start := time.Now()
				_, err := NewCrawlSite(m).Run(ctx, env)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var got []string
				depths := map[int]int{}
				raw, _ := env.artifact("pages.json")
				var pages []crawlPageOut
				if err := json.Unmarshal(raw, &pages); err != nil {
					t.Fatalf("%s: pages.json: %v", name, err)
				}
				for _, p := range pages {
					got = append(got, fmt.Sprintf("%d %s", p.Depth, strings.TrimPrefix(p.URL, base)))
					depths[p.Depth]++
				}
				t.Logf("%s: %d pages %v in %v", name, len(got), depths, time.Since(start).Round(time.Millisecond))
				if len(got) != 300 {
					t.Fatalf("%s: %d pages, want 300 (maxPages binds: the site has 530)", name, len(got))
				}
				if want == nil {
					want, wantFrom = got, name
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s kept other pages than %s:\n%s", name, wantFrom, listDiff(want, got))
				}
			}
		}
	}
}

// listDiff names the entries only in a and only in b.
func listDiff(a, b []string) string {
	only := func(x, y []string) []string {
		var out []string
		for _, s := range x {
			if !slices.Contains(y, s) {
				out = append(out, s)
			}
		}
		return out
	}
	oa, ob := only(a, b), only(b, a)
	if len(oa) == 0 && len(ob) == 0 {
		return "same pages, in another order"
	}
	return fmt.Sprintf("only in the first (%d): %v\nonly in the second (%d): %v", len(oa), oa, len(ob), ob)
}
