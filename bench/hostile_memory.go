package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Scenario 12, memory-hostile: the daemon's peak RSS (VmHWM) on the pages
// of issue 26 that took it to gigabytes, each case in a fresh
// `browsertask serve` on a fresh database, render "http" (the daemon
// itself parses every page):
//
//	(a) one page of 300 nested <div>s around 1 MiB of text, fields
//	    {"d": {"selector": "div", "all": true}} (was 3.99 GB);
//	(b) crawl_site, includeLinks, 1000 pages of 2000 distinct links each
//	    (was 1.93 GB), then the run's dashboard page is opened;
//	(c) the same crawl over 2000 pages (--max-urls 2000).
//
// Target: every peak under 256 MB.

// hostileMemoryLimitMB is the target for every case.
const hostileMemoryLimitMB = 256

// hostileCase is one measured case.
type hostileCase struct {
	Name      string
	Pages     int
	PeakMB    float64
	Artifact  int64 // pages.json bytes
	Elapsed   time.Duration
	RunPageMs float64 // opening the run's dashboard page (crawls)
}

// hostileMemoryResult is scenario 12's figures.
type hostileMemoryResult struct {
	Cases []hostileCase
}

// hostileSite serves the pages on loopback: /nested, and /farm/{n}, a
// page with 2000 distinct links to /farm/{2000n+1} … /farm/{2000n+2000}.
func hostileSite() (*http.Server, string, error) {
	mux := http.NewServeMux()
	nested := "<!doctype html><title>nested</title><body>" + strings.Repeat("<div>", 300) +
		strings.Repeat("abcdefgh", 1<<17) + strings.Repeat("</div>", 300) + "</body>"
	mux.HandleFunc("GET /nested", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, nested)
	})
	mux.HandleFunc("GET /farm/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>Farm %d</title><body><h1>Farm %d</h1>", n, n)
		for j := 1; j <= 2000; j++ {
			k := 2000*n + j
			fmt.Fprintf(&b, "<a href=\"/farm/%d\">farm page %d</a>\n", k, k)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, b.String())
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return srv, "http://" + ln.Addr().String(), nil
}

// benchHostileMemory runs the three cases.
func benchHostileMemory(ctx context.Context, bin string, out io.Writer) (*hostileMemoryResult, error) {
	srv, base, err := hostileSite()
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "browsertask-bench-hostile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cases := []struct {
		name     string
		pages    int
		template string
		inputs   map[string]any
	}{
		{"(a) 300 nested divs around 1 MiB, all: true", 1, "batch_extract_pages", map[string]any{
			"urls": []string{base + "/nested"}, "render": "http", "fields": map[string]any{"d": map[string]any{"selector": "div", "all": true}}}},
		{"(b) crawl, includeLinks, 1000 pages of 2000 links", 1000, "crawl_site", map[string]any{
			"startUrl": base + "/farm/0", "maxPages": 1000, "render": "http", "includeLinks": true}},
		{"(c) crawl, includeLinks, 2000 pages of 2000 links", 2000, "crawl_site", map[string]any{
			"startUrl": base + "/farm/0", "maxPages": 2000, "render": "http", "includeLinks": true}},
	}
	res := &hostileMemoryResult{}
	for i, c := range cases {
		hc, err := hostileRun(ctx, bin, filepath.Join(dir, fmt.Sprintf("h%d.db", i)), c.template, c.inputs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		hc.Name, hc.Pages = c.name, c.pages
		fmt.Fprintf(out, "  %s: peak RSS %.1f MB, pages.json %.1f MB, %.1f s", hc.Name, hc.PeakMB, float64(hc.Artifact)/(1<<20), hc.Elapsed.Seconds())
		if hc.RunPageMs > 0 {
			fmt.Fprintf(out, ", run page %.0f ms", hc.RunPageMs)
		}
		fmt.Fprintln(out)
		res.Cases = append(res.Cases, *hc)
	}
	return res, nil
}

// hostileRun runs one case in a fresh daemon and returns its figures.
func hostileRun(ctx context.Context, bin, dbPath, template string, inputs map[string]any) (*hostileCase, error) {
	d, err := startServe(ctx, bin, dbPath, "--max-urls", "2000")
	if err != nil {
		return nil, err
	}
	defer d.stop()
	cl, err := connectHTTP(ctx, d.endpoint())
	if err != nil {
		return nil, err
	}
	defer cl.close()
	start := time.Now()
	id, err := cl.submitAsync(ctx, template, inputs)
	if err != nil {
		return nil, err
	}
	r, err := cl.waitRun(ctx, id, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	hc := &hostileCase{Elapsed: time.Since(start)}
	if r.Status != "succeeded" {
		return nil, fmt.Errorf("run %s ended %s: %s", id, r.Status, d.stderr.String())
	}
	var meta struct {
		Size int64 `json:"size"`
	}
	var full struct {
		Result struct {
			ArtifactID string `json:"artifactId"`
		} `json:"result"`
	}
	if err := cl.call(ctx, "get_task_run", map[string]any{"runId": id}, &full); err == nil && full.Result.ArtifactID != "" {
		var chunk struct {
			TotalSize int64 `json:"totalSize"`
		}
		if cl.call(ctx, "get_artifact", map[string]any{"artifactId": full.Result.ArtifactID, "length": 1}, &chunk) == nil {
			meta.Size = chunk.TotalSize
		}
	}
	hc.Artifact = meta.Size
	if template == "crawl_site" {
		t0 := time.Now()
		resp, err := http.Get("http://" + d.addr + "/runs/" + id)
		if err != nil {
			return nil, fmt.Errorf("run page: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("run page answered %s", resp.Status)
		}
		hc.RunPageMs = float64(time.Since(t0).Microseconds()) / 1000
	}
	hc.PeakMB = float64(procStatusKB(d.cmd.Process.Pid, "VmHWM:")) / 1024
	if hc.PeakMB == 0 {
		return nil, fmt.Errorf("no VmHWM for pid %d", d.cmd.Process.Pid)
	}
	return hc, nil
}

// printHostileMemory prints scenario 12's line.
func printHostileMemory(w io.Writer, h *hostileMemoryResult) {
	parts := make([]string, 0, len(h.Cases))
	ok := true
	for _, c := range h.Cases {
		s := fmt.Sprintf("%s %.1f MB (pages.json %.1f MB", c.Name, c.PeakMB, float64(c.Artifact)/(1<<20))
		if c.RunPageMs > 0 {
			s += fmt.Sprintf(", run page %.0f ms", c.RunPageMs)
		}
		parts = append(parts, s+")")
		ok = ok && c.PeakMB < hostileMemoryLimitMB
	}
	fmt.Fprintf(w, "12. daemon peak RSS (VmHWM) on hostile results, render \"http\": %s (target < %d MB each: %s)\n",
		strings.Join(parts, "; "), hostileMemoryLimitMB, verdict(ok))
}
