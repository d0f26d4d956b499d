package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
)

// printSummary prints every figure with its ratio and target.
func printSummary(w io.Writer, o *options, r *results) {
	fmt.Fprintf(w, "\nbrowsertask benchmarks — %s/%s, %d CPUs, %s, total %.0f s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), r.elapsed.Seconds())
	if e := r.extract; e != nil {
		fmt.Fprintf(w, "1. batch_extract_pages, %d local pages, %d tabs, median of %d: browsertask (MCP end to end) %.1f pages/s, bare go-rod %.1f pages/s → ratio %.2f (target ≥ 0.90: %s); per repeat %s, median %.2f\n",
			e.Pages, e.Tabs, len(e.Engine), e.EngineMed, e.BaseMed, e.Ratio, verdict(e.Ratio >= 0.9), floats(e.PerRepeatRatio, "%.2f"), e.MedianPairRatio)
		fmt.Fprintf(w, "1. CPU per page (median), Chromium + this process: browsertask %.1f + %.1f ms, bare go-rod %.1f + %.1f ms\n",
			median(e.EngineBrowserCPU), median(e.EngineSelfCPU), median(e.BaseBrowserCPU), median(e.BaseSelfCPU))
	}
	for _, t := range r.rtt {
		target := ""
		if t.Transport == "HTTP" {
			target = fmt.Sprintf(" (target p50 ≤ 1.5×: %s)", verdict(t.RatioP50 <= 1.5))
		}
		fmt.Fprintf(w, "2. round trip, %d calls: %s%s\n", t.Calls, t, target)
	}
	if s := r.sched; s != nil {
		fmt.Fprintf(w, "3. scheduler, %d dev_echo runs (sleepMs 0), limit %d: %.0f runs/s queue → terminal (target ≥ 200: %s), submit %.0f runs/s; max running %d in the database, %d in the engine (limit %d: %s); slot refill p50 %s p99 %s; claim latency (paced, %d runs) p50 %s p99 %s; failed %d\n",
			s.Runs, s.Limit, s.RunsPerSec, verdict(s.RunsPerSec >= 200), s.SubmitPerSec, s.MaxRunningDB, s.MaxRunningLocal, s.Limit,
			verdict(s.MaxRunningDB == s.Limit && s.MaxRunningLocal <= s.Limit), ms(s.RefillP50), ms(s.RefillP99),
			s.PacedRuns, ms(s.ClaimP50), ms(s.ClaimP99), s.Failed)
	}
	if a := r.artifact; a != nil {
		fmt.Fprintf(w, "4. get_artifact, %d MiB binary over HTTP (%d chunks of 256 KiB, base64): median %.1f MB/s (reads %s MB/s)\n",
			a.Size>>20, a.Chunks, a.Median, floats(a.MBps, "%.1f"))
	}
	if l := r.live; l != nil {
		fmt.Fprintf(w, "6. live view, batch_extract_pages %d pages, %d tabs, median of %d: without a viewer %.1f pages/s, with one viewer %.1f pages/s → ratio %.2f (target ≥ 0.90: %s); per repeat %s, median %.2f; %d frames, %.1f MB streamed\n",
			l.Pages, l.Tabs, len(l.With), l.WithoutMed, l.WithMed, l.Ratio, verdict(l.Ratio >= 0.9), floats(l.PerRepeatRatio, "%.2f"), l.MedianPairRatio, l.Frames, float64(l.Bytes)/1e6)
	}
	if x := r.render; x != nil {
		fmt.Fprintf(w, "7. batch_extract_pages, %d static pages, %d tabs, median of %d: render \"http\" %.1f pages/s, render \"auto\" %.1f pages/s (%.0f%% over HTTP), bare go-rod %.1f pages/s → http %.1f× (target ≥ 10: %s), auto %.1f× (target ≥ 5 with ≥ 90%% over HTTP: %s); per repeat http %s, auto %s, bare %s\n",
			x.Pages, x.Tabs, len(x.HTTP), x.HTTPMed, x.AutoMed, x.AutoShareMed*100, x.BaseMed, x.HTTPRatio, verdict(x.HTTPRatio >= 10),
			x.AutoRatio, verdict(x.AutoRatio >= 5 && x.AutoShareMed >= 0.9), floats(x.HTTP, "%.1f"), floats(x.Auto, "%.1f"), floats(x.Base, "%.1f"))
	}
	if b := r.blocking; b != nil {
		printBlocking(w, b)
	}
	if x := r.mixed; x != nil {
		fmt.Fprintf(w, "8. batch_extract_pages, mixed site (%d pages on 4 hosts, 2 built by JavaScript), %d tabs, median of %d: render \"auto\" %.1f pages/s (%.0f%% over HTTP), render \"browser\" %.1f pages/s → %.2f× (target ≥ 1.8: %s); pages whose title or fields differ: %d (target 0: %s)\n",
			x.Pages, x.Tabs, len(x.Auto), x.AutoMed, x.AutoHTTP*100, x.BrowserMd, x.Ratio, verdict(x.Ratio >= 1.8), x.Mismatches, verdict(x.Mismatches == 0))
	}
	if c := r.crawl; c != nil {
		fmt.Fprintf(w, "10. crawl_site, %d pages of a generated site, %d tabs: render \"auto\" %.1f pages/s with %.0f%% over HTTP, render \"browser\" %.1f pages/s → %.1f×; batch_extract_pages (browser) over %d of those pages %.1f pages/s → crawl/batch %.2f (target ≈ 1: %s)\n",
			c.Pages, c.Tabs, c.AutoRate, c.AutoHTTP*100, c.BrowserRate, c.Ratio, c.BatchPages, c.BatchRate, c.CrawlBatch, verdict(c.CrawlBatch >= 0.9))
	}
	if m := r.memory; m != nil {
		fmt.Fprintf(w, "11. memory in one batch_extract_pages of %d pages: daemon VmRSS %.1f MB after %d pages, %.1f MB after %d → %.2f×; Chromium PSS %.1f MB (%d processes) → %.1f MB (%d) → %.2f× (target ≤ 1.5 both: %s)\n",
			m.Pages, m.DaemonEarlyMB, m.EarlyAt, m.DaemonLateMB, m.LateAt, m.DaemonRatio, m.BrowserEarlyMB, m.BrowserProcsEarly, m.BrowserLate, m.ProcsLate,
			m.BrowserRatio, verdict(m.DaemonRatio <= 1.5 && m.BrowserRatio <= 1.5))
	}
	if h := r.hostile; h != nil {
		printHostileMemory(w, h)
	}
	if f := r.foot; f != nil {
		fmt.Fprintf(w, "5. browsertask serve, median of %d starts: start → /mcp ready %.0f ms (target < 200: %s), idle RSS %.1f MB (target < 40: %s); starts %s ms, RSS %s MB\n",
			f.Starts, f.ReadyMedian, verdict(f.ReadyMedian < 200), f.RSSMedian, verdict(f.RSSMedian < 40),
			floats(f.ReadyMs, "%.0f"), floats(f.RSSMB, "%.1f"))
	}
	if fr := r.fidelity; fr != nil {
		printFidelitySummary(w, fr)
	}
}

func floats(xs []float64, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// printReport prints the README section: how to run, and this output.
func printReport(w io.Writer, o *options, r *results) {
	var sb strings.Builder
	printSummary(&sb, o, r)
	fmt.Fprintf(w, "\n---- README section ----\n## Benchmarks\n\n"+
		"`go run ./bench` (from the repository root; needs Chromium at /usr/bin/chromium or on PATH) runs six\n"+
		"side-by-side measurements in one process run and prints figures and ratios. Absolute\n"+
		"numbers depend on the machine; the ratios are measured in the same run and are the point.\n\n"+
		"1. `batch_extract_pages` on %d local pages (in-process httptest server) end to end through\n"+
		"   MCP over HTTP — `run_task_template` (async), `get_task_run` polls, `pages.json` read with\n"+
		"   `get_artifact` — against a bare go-rod baseline: the daemon's own Chromium, same extraction\n"+
		"   script (read from the template's source), same tab count (%d), a fresh incognito context\n"+
		"   per repeat. Alternating repeats (ABBA), median of %d; CPU per page of Chromium's processes\n"+
		"   and of the benchmark process for each side.\n"+
		"2. `get_task_run` round trip p50/p99 over HTTP (`browsertask serve`) and stdio\n"+
		"   (`browsertask mcp`) vs `get_runtime_profile` as the trivial tool (it answers the in-memory\n"+
		"   profile without touching the database), calls alternating on one session.\n"+
		"3. Scheduler: %d runs of the browserless `dev_echo` template (sleepMs 0, one checkpoint)\n"+
		"   queued, then drained: runs/s, the most runs running (sampled from the database and the\n"+
		"   engine), slot refill latency (a final write → the next claim); then %d runs submitted one\n"+
		"   every 5 ms: queued → running claim latency.\n"+
		"4. `get_artifact` of a %d MiB random binary artifact over HTTP, MB/s (10^6 bytes), median of 3.\n"+
		"5. `browsertask serve` on a fresh database: process start → `/mcp` answering `initialize`, and\n"+
		"   VmRSS one second later (idle, no browser), median of %d.\n\n"+
		"Subsets and sizes: `-only foot,rtt,artifact,sched,extract`, `-pages`, `-repeats`, `-tabs`,\n"+
		"`-calls`, `-sched-runs`, `-limit`, `-artifact-mib`, `-starts`; `-cpuprofile FILE` profiles the\n"+
		"in-process scenarios (1 and 3, plus 2 over HTTP and 4 with `-inprocess`); `-report` prints this\n"+
		"section. `-only browsercost` (with `-variants`) is a diagnostic pricing CDP features (Network\n"+
		"events, Fetch interception, auto-attach, the browser package's own path) against the bare baseline.\n\n"+
		"Output of `go run ./bench -report` on the development machine (%d CPUs, shared):\n\n```\n%s```\n",
		o.pages, o.tabs, o.repeats, o.schedRuns, o.pacedRuns, o.artifactMB, o.starts, runtime.NumCPU(),
		strings.TrimPrefix(sb.String(), "\n"))
}
