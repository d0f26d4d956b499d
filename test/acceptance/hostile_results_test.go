package acceptance

// Issue 26 items 2 and 3 on the built binary: no page decides how large a
// result grows, and every cut is reported.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hostileResultSite serves /nested (300 nested <div>s around 1 MiB of
// text) and /farm/{n} (1500 distinct links to /farm/{n}-{i}).
func hostileResultSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nested", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>nested</title><body>"+strings.Repeat("<div>", 300)+
			strings.Repeat("abcdefgh", 1<<17)+strings.Repeat("</div>", 300)+"</body>")
	})
	mux.HandleFunc("GET /farm/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>farm %s</title><body>", r.PathValue("n"))
		for i := range 1500 {
			fmt.Fprintf(&b, `<a href="/farm/%s-%d">x</a>`, r.PathValue("n"), i)
		}
		io.WriteString(w, b.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestBlackboxHostileResultsCapped: `all` over 300 nested divs around
// 1 MiB gives 2 values of 20000 characters with fieldsCapped {300, 2, 2}
// in the answer, and a pages.json of under 200 KB (314 MB before); a
// crawl with includeLinks over pages of 1500 links stores 1000 per page
// with linksTruncated, and its run page opens.
func TestBlackboxHostileResultsCapped(t *testing.T) {
	t.Parallel()
	site := hostileResultSite(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)

	res := runOK(t, cs, "batch_extract_pages", "", obj{"urls": []any{site.URL + "/nested"}, "render": "http",
		"fields": obj{"d": obj{"selector": "div", "all": true}}})
	page := res["pages"].([]any)[0].(obj)
	capped := sub(sub(page, "fieldsCapped"), "d")
	if num(capped, "matches") != 300 || num(capped, "kept") != 2 || num(capped, "cut") != 2 {
		t.Fatalf("fieldsCapped.d = %v", capped)
	}
	vals := sub(page, "fields")["d"].([]any)
	if len(vals) != 2 || len(vals[0].(string)) != 20000 {
		t.Fatalf("fields.d: %d values", len(vals))
	}
	data, _, _ := readArtifact(t, cs, res["artifactId"].(string), 0, 1<<20)
	if len(data) > 200_000 {
		t.Fatalf("pages.json is %d bytes", len(data))
	}

	run, isErr := runSync(t, cs, "crawl_site", "", obj{"startUrl": site.URL + "/farm/0", "maxPages": 8, "render": "http", "includeLinks": true})
	if isErr || run["status"] != "succeeded" {
		t.Fatalf("crawl: %v %v", run["status"], run["error"])
	}
	data, _, _ = readArtifact(t, cs, sub(run, "result")["artifactId"].(string), 0, 1<<20)
	var pages []struct {
		Links          []any `json:"links"`
		LinksTruncated bool  `json:"linksTruncated"`
	}
	if err := json.Unmarshal(data, &pages); err != nil || len(pages) != 8 {
		t.Fatalf("pages.json: %d pages, %v", len(pages), err)
	}
	for i, pg := range pages {
		if len(pg.Links) != 1000 || !pg.LinksTruncated {
			t.Fatalf("pages.json[%d]: %d links, linksTruncated %v", i, len(pg.Links), pg.LinksTruncated)
		}
	}
	resp, err := http.Get("http://" + p.addr + "/runs/" + run["runId"].(string))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run page: %s", resp.Status)
	}
}
