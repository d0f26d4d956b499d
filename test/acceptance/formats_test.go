package acceptance

import (
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlackboxCrawlMarkdownWithinBudget is issue 29's acceptance 4: a
// 1000-page crawl_site with formats: ["markdown"] (render "http", the
// generated big site) answers get_task_run within the inline budget,
// whole pages with their Markdown inline while they fit, and its pages.md
// (every page under its URL, breadth-first order) reads whole through
// get_artifact and, being under MaxResourceArtifactBytes (8 MiB), through
// resources/read; a 100-page crawl's pages.md reads whole the same way.
func TestBlackboxCrawlMarkdownWithinBudget(t *testing.T) {
	t.Parallel()
	const budget = 64 << 10 // serve's default --max-inline-bytes
	cs := connectHTTP(t, startServe(t), nil)
	fx := fixture.New(t)
	crawl := func(pages int) string {
		return submitAsync(t, cs, "crawl_site", obj{"startUrl": fx.URL("/big/0"), "maxPages": pages, "maxDepth": 4,
			"render": "http", "formats": []string{"markdown"}, "concurrency": 8}, nil)
	}
	bigID, smallID := crawl(1000), crawl(100)

	run := waitTerminal(t, cs, bigID)
	if run["status"] != "succeeded" {
		t.Fatalf("1000-page crawl: %v %v", run["status"], run["error"])
	}
	res, n := replySize(t, cs, "get_task_run", obj{"runId": bigID})
	r := sub(res, "result")
	if n > budget || r["truncated"] != true || num(r, "itemsTotal") != 1000 || num(r, "itemsInline") < 10 || num(r, "itemsInline") >= 1000 {
		t.Fatalf("get_task_run of the 1000-page crawl: %d bytes (budget %d), truncated %v, itemsInline %v of %v", n, budget, r["truncated"], r["itemsInline"], r["itemsTotal"])
	}
	inline := r["pages"].([]any)
	for i, p := range inline {
		p := p.(obj)
		md, _ := p["markdown"].(string)
		if !strings.Contains(md, fmt.Sprintf("Section %d.1", i)) || num(p, "markdownBytes") != int64(len(md)) || num(p, "tokensEstimate") != (int64(len(md))+3)/4 {
			t.Fatalf("inline page %d: markdownBytes %v tokensEstimate %v markdown %.80q", i, p["markdownBytes"], p["tokensEstimate"], md)
		}
	}
	mdID, _ := r["markdownArtifactId"].(string)
	data, mime, chunks := readArtifact(t, cs, mdID, 0, 1<<20)
	if mime != "text/markdown" {
		t.Fatalf("pages.md mime %q", mime)
	}
	sections := strings.Split(string(data), "# "+fx.URL("/big/"))
	if len(sections) != 1001 || sections[0] != "" {
		t.Fatalf("pages.md: %d sections (want 1000 pages under their URL)", len(sections)-1)
	}
	for i, s := range sections[1:] {
		if !strings.HasPrefix(s, fmt.Sprintf("%d\n\n", i)) || !strings.Contains(s, fmt.Sprintf("Section %d.1\n", i)) {
			t.Fatalf("pages.md section %d: %.120q", i, s)
		}
	}
	if first := inline[0].(obj)["markdown"].(string); !strings.Contains(string(data), "\n\n"+first+"\n\n") {
		t.Fatalf("page 0's inline Markdown is not in pages.md")
	}
	rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "browsertask://artifacts/" + mdID})
	if err != nil {
		t.Fatal(err)
	}
	if c := rr.Contents[0]; c.MIMEType != "text/markdown" || c.Text != string(data) {
		t.Fatalf("resources/read of the 1000-page pages.md: %s, %d bytes (get_artifact %d): %.200s", c.MIMEType, len(c.Text), len(data), c.Text)
	}

	small := waitTerminal(t, cs, smallID)
	if small["status"] != "succeeded" {
		t.Fatalf("100-page crawl: %v %v", small["status"], small["error"])
	}
	sr := sub(callOK(t, cs, "get_task_run", obj{"runId": smallID}), "result")
	smallMD, _ := sr["markdownArtifactId"].(string)
	sdata, _, _ := readArtifact(t, cs, smallMD, 0, 1<<20)
	rr, err = cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "browsertask://artifacts/" + smallMD})
	if err != nil {
		t.Fatal(err)
	}
	if c := rr.Contents[0]; c.MIMEType != "text/markdown" || c.Text != string(sdata) || strings.Count(c.Text, "# "+fx.URL("/big/")) != 100 {
		t.Fatalf("resources/read of the 100-page pages.md: %s, %d bytes (get_artifact %d)", c.MIMEType, len(c.Text), len(sdata))
	}
	t.Logf("1000-page crawl with markdown: get_task_run %d bytes, %v pages inline; pages.md %d bytes in %d get_artifact chunks; 100 pages: pages.md %d bytes through resources/read",
		n, r["itemsInline"], len(data), chunks, len(sdata))
}
