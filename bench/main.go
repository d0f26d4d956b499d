// Command bench measures browsertask side by side with what it is built on
// and prints the figures with their ratios:
//
//  1. batch_extract_pages on local fixture pages through MCP vs a bare
//     go-rod baseline (same browser, flags, script and tab count);
//  2. get_task_run round trips over stdio and HTTP vs a trivial tool;
//  3. the scheduler with a browserless template: runs/s, claim latency and
//     the concurrency limit;
//  4. get_artifact throughput for a large binary artifact over HTTP;
//  5. idle RSS and start → ready of `browsertask serve`;
//  6. batch_extract_pages with and without a viewer on the run's live view;
//  7. batch_extract_pages with render "http" and "auto" vs the bare go-rod
//     pool on static pages;
//  9. batch_extract_pages on pages with images and a web font with the
//     default blockResources, with nothing blocked, and the bare go-rod pool;
//  11. memory of the daemon and its Chromium early and late in a long run;
//  12. the daemon's peak RSS on hostile results (memory-hostile);
//  13. the HTTP path against Chromium on every page of the real corpora
//     (fidelity, not in the default set: internal/fidelity).
//
// Run it from the repository root: go run ./bench [-only extract,rtt,...].
// Absolute numbers on a shared machine are noise; the ratios, measured in
// the same process run, are the point. -report prints the README section.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// options are the command's flags.
type options struct {
	only       string
	pages      int
	repeats    int
	tabs       int
	calls      int
	schedRuns  int
	pacedRuns  int
	limit      int
	artifactMB int
	starts     int
	bin        string
	cpuProfile string
	report     bool
	verbose    bool
	inprocess  bool
	variants   string
	// contentPages limits scenario 18 to the first N pages (0: all);
	// contentPaths picks its paths (http, browser).
	contentPages int
	contentPaths string
	livePages    int
	// blockingPages is the page count of scenario 9 (blocking.go).
	blockingPages int
	// crawlPages is the page count of scenario 10 (crawl.go).
	crawlPages int
	// mixedPages is scenario 8's pages per host of the mixed site.
	mixedPages int
	// autoCostCorpus is the documentation corpus of scenario 13
	// (autocost.go).
	autoCostCorpus string
	// fidelityCorpora, fidelityPages and fidelityOut are scenario 14's
	// corpora (comma-separated names), pages per corpus (0 = every page)
	// and the file that lists every difference.
	fidelityCorpora string
	fidelityPages   int
	fidelityOut     string
	// fidelityMatch keeps only the pages whose path contains one of its
	// comma-separated strings (to look again at the pages that differ).
	fidelityMatch string
}

func main() {
	o := &options{}
	flag.StringVar(&o.only, "only", "foot,rtt,artifact,sched,extract,live,render,mixed,blocking,crawl,memory", "scenarios to run, comma-separated: foot, rtt, artifact, sched, extract, live, render, mixed, blocking, crawl, memory, memory-hostile, autocost, fidelity, postgres, map, snapshot, content (and the diagnostic browsercost)")
	flag.StringVar(&o.fidelityCorpora, "fidelity-corpora", "all", "fidelity: the corpora to compare, comma-separated: python3-doc, postgresql-doc-15, libjsoncpp-doc, trafilatura")
	flag.IntVar(&o.fidelityPages, "fidelity-pages", 0, "fidelity: pages per corpus, spread evenly over it (0 = every page)")
	flag.StringVar(&o.fidelityMatch, "fidelity-match", "", "fidelity: only the pages whose path contains one of these comma-separated strings")
	flag.StringVar(&o.fidelityOut, "fidelity-out", filepath.Join(os.TempDir(), "browsertask-fidelity.tsv"), "fidelity: the file that lists every difference (corpus, page, aspect, class, detail)")
	flag.IntVar(&o.livePages, "live-pages", 300, "fixture pages per batch_extract_pages run in the live view scenario (at most -pages)")
	flag.IntVar(&o.mixedPages, "mixed-pages", 100, "pages per host of the mixed site (4 hosts) in scenario 8")
	flag.StringVar(&o.autoCostCorpus, "autocost-corpus", fixture.CorpusPython, "documentation corpus (internal/fixture) whose every page scenario 13 (autocost) reads")
	flag.IntVar(&o.crawlPages, "crawl-pages", 2000, "pages crawl_site visits on the generated site (scenario 10; at most 2000)")
	flag.IntVar(&o.pages, "pages", 1000, "fixture pages per batch_extract_pages run")
	flag.IntVar(&o.blockingPages, "blocking-pages", 300, "pages with images and a web font per run in the resource blocking scenario (blocking)")
	flag.IntVar(&o.repeats, "repeats", 4, "repeats of the extraction pair, alternating which side goes first (the median is reported; even counts balance the order)")
	flag.StringVar(&o.variants, "variants", "", "browsercost: the variants to run, comma-separated (default all)")
	flag.IntVar(&o.contentPages, "content-pages", 0, "content: score only the first N pages of the comparison set (0: all), for quick iterations")
	flag.StringVar(&o.contentPaths, "content-paths", "http,browser", "content: the paths to score, comma-separated: http, browser")
	flag.IntVar(&o.tabs, "tabs", 5, "tabs (concurrency) for both extraction sides")
	flag.IntVar(&o.calls, "calls", 500, "round trips per tool and transport")
	flag.IntVar(&o.schedRuns, "sched-runs", 2000, "dev_echo runs drained by the scheduler")
	flag.IntVar(&o.pacedRuns, "paced-runs", 200, "dev_echo runs submitted one every 5 ms for the claim latency")
	flag.IntVar(&o.limit, "limit", 5, "maxConcurrentRuns for the scheduler scenario")
	flag.IntVar(&o.artifactMB, "artifact-mib", 20, "size of the artifact read over HTTP, MiB")
	flag.IntVar(&o.starts, "starts", 5, "daemon starts for start → ready and idle RSS")
	flag.StringVar(&o.bin, "bin", "", "browsertask binary to start (default: go build one)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (in-process scenarios: extract, sched) to this file")
	flag.BoolVar(&o.report, "report", false, "also print the README \"Benchmarks\" section (markdown) with these figures")
	flag.BoolVar(&o.inprocess, "inprocess", false, "serve scenarios 2 (HTTP only) and 4 from an in-process daemon instead of the binary, so -cpuprofile covers the server")
	flag.BoolVar(&o.verbose, "v", false, "log the servers' warnings to stderr")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// results collects every scenario's figures for the summary.
type results struct {
	started  time.Time
	elapsed  time.Duration
	foot     *footResult
	rtt      []*rtResult
	artifact *artifactResult
	sched    *schedResult
	extract  *extractResult
	live     *liveResult
	render   *renderResult
	memory   *memoryResult
	hostile  *hostileMemoryResult
	blocking *blockingResult
	crawl    *crawlResult
	mixed    *mixedResult
	fidelity *fidelityResult
	snapshot *snapshotResult
	postgres *pgResult
	content  *contentResult
}

// run executes the selected scenarios and prints the summary.
func run(ctx context.Context, o *options, out io.Writer) error {
	want := map[string]bool{}
	for _, s := range strings.Split(o.only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	logLevel := slog.LevelError
	if o.verbose {
		logLevel = slog.LevelWarn
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res := &results{started: time.Now()}
	tmp, err := os.MkdirTemp("", "browsertask-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := o.bin
	if bin == "" && (want["foot"] || want["memory"] || want["memory-hostile"] || ((want["rtt"] || want["artifact"]) && !o.inprocess)) {
		fmt.Fprintln(out, "building browsertask …")
		if bin, err = buildBinary(ctx, tmp); err != nil {
			return err
		}
	}
	if want["foot"] {
		fmt.Fprintf(out, "[5] footprint: %d starts of browsertask serve\n", o.starts)
		if res.foot, err = benchFootprint(ctx, bin, o.starts); err != nil {
			return fmt.Errorf("footprint: %w", err)
		}
	}
	if want["rtt"] || want["artifact"] {
		if err := runDaemonScenarios(ctx, o, bin, tmp, want, res, out, log); err != nil {
			return err
		}
	}
	if want["sched"] {
		fmt.Fprintf(out, "[3] scheduler: %d dev_echo runs, limit %d\n", o.schedRuns, o.limit)
		if res.sched, err = benchScheduler(ctx, o, log); err != nil {
			return fmt.Errorf("scheduler: %w", err)
		}
	}
	if want["browsercost"] {
		fmt.Fprintf(out, "[diagnostic] CDP feature cost: %d pages, %d tabs, %d repeats\n", o.pages, o.tabs, o.repeats)
		if err := benchBrowserCost(ctx, o, log, out); err != nil {
			return fmt.Errorf("browsercost: %w", err)
		}
	}
	if want["extract"] {
		fmt.Fprintf(out, "[1] batch_extract_pages: %d pages, %d tabs, %d repeats\n", o.pages, o.tabs, o.repeats)
		if res.extract, err = benchExtract(ctx, o, log, out); err != nil {
			return fmt.Errorf("extract: %w", err)
		}
	}
	if want["live"] {
		fmt.Fprintf(out, "[6] live view: batch_extract_pages, %d pages, %d tabs, %d repeats, without and with a viewer\n", min(o.pages, o.livePages), o.tabs, o.repeats)
		if res.live, err = benchLive(ctx, o, log, out); err != nil {
			return fmt.Errorf("live: %w", err)
		}
	}
	if want["render"] {
		fmt.Fprintf(out, "[7] render http / auto vs bare go-rod: %d static pages, %d tabs, %d repeats\n", o.pages, o.tabs, o.repeats)
		if res.render, err = benchRender(ctx, o, log, out); err != nil {
			return fmt.Errorf("render: %w", err)
		}
	}
	if want["blocking"] {
		fmt.Fprintf(out, "[9] resource blocking: %d pages with images and a web font, %d tabs, %d repeats: default blockResources, [], bare go-rod\n", o.blockingPages, o.tabs, o.repeats)
		if res.blocking, err = benchBlocking(ctx, o, log, out); err != nil {
			return fmt.Errorf("blocking: %w", err)
		}
	}
	if want["mixed"] {
		fmt.Fprintf(out, "[8] mixed site: %d pages per host × 4 hosts (half built by JavaScript), %d tabs, %d repeats: render auto vs browser\n", o.mixedPages, o.tabs, o.repeats)
		if res.mixed, err = benchMixed(ctx, o, log, out); err != nil {
			return fmt.Errorf("mixed: %w", err)
		}
	}
	if want["crawl"] {
		fmt.Fprintf(out, "[10] crawl_site: %d pages of a generated site, %d tabs, render auto and browser\n", o.crawlPages, o.tabs)
		if res.crawl, err = benchCrawl(ctx, o, log, out); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
	}
	if want["autocost"] {
		fmt.Fprintf(out, "[13] render auto's cost: every page of %s, %d tabs, %d repeats: render http, auto, browser\n", o.autoCostCorpus, o.tabs, o.repeats)
		if _, err := benchAutoCost(ctx, o, log, out); err != nil {
			return fmt.Errorf("autocost: %w", err)
		}
	}
	if want["memory"] {
		fmt.Fprintf(out, "[11] memory: one batch_extract_pages of %d pages, %d tabs, in browsertask serve\n", o.pages, o.tabs)
		if res.memory, err = benchMemory(ctx, o, bin, out); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	if want["memory-hostile"] {
		fmt.Fprintln(out, "[12] memory-hostile: peak RSS of browsertask serve on issue 26's pages, render http, a fresh daemon each")
		if res.hostile, err = benchHostileMemory(ctx, bin, out); err != nil {
			return fmt.Errorf("memory-hostile: %w", err)
		}
	}
	if want["fidelity"] {
		fmt.Fprintf(out, "[14] fidelity: batch_extract_pages render http vs browser on the real corpora, %d tabs\n", o.tabs)
		if res.fidelity, err = benchFidelity(ctx, o, log, out); err != nil {
			return fmt.Errorf("fidelity: %w", err)
		}
	}
	if want["snapshot"] {
		fmt.Fprintf(out, "[17] snapshot: browsertask's page snapshot vs @playwright/mcp's browser_snapshot on %d corpus pages, tokens = ceil(bytes/4)\n", snapshotPages)
		if res.snapshot, err = benchSnapshot(ctx, out); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if want["postgres"] {
		fmt.Fprintf(out, "[15] postgres: wake-up latency (%d runs) and %d dev_echo runs drained by 1-3 engines, limit %d, vs SQLite\n", min(o.pacedRuns, 50), o.schedRuns, o.limit)
		if res.postgres, err = benchPostgres(ctx, o, log, out); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	}
	if want["map"] {
		fmt.Fprintf(out, "[16] map_site: the generated site and python3-doc, %d fetches at once, beside crawl_site render http\n", o.tabs)
		if err := benchMap(ctx, o, log, out); err != nil {
			return fmt.Errorf("map: %w", err)
		}
	}
	if want["content"] {
		fmt.Fprintf(out, "[18] content: main content on go-trafilatura's comparison set, HTTP path and browser path, %d workers/tabs\n", o.tabs)
		if res.content, err = benchContent(ctx, o, log, out); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	}
	res.elapsed = time.Since(res.started)
	printSummary(out, o, res)
	if o.report {
		printReport(out, o, res)
	}
	return nil
}

// runDaemonScenarios runs the round trips (stdio and HTTP) and the artifact
// read against `browsertask serve` / `browsertask mcp` processes.
func runDaemonScenarios(ctx context.Context, o *options, bin, tmp string, want map[string]bool, res *results, out io.Writer, log *slog.Logger) error {
	dbPath := tmp + "/rtt.db"
	endpoint := ""
	if o.inprocess {
		p, err := startInproc(ctx, tmp, engine.DefaultConfig(), log)
		if err != nil {
			return err
		}
		defer p.stop()
		dbPath, endpoint = p.dbPath, p.endpoint()
	} else {
		d, err := startServe(ctx, bin, dbPath)
		if err != nil {
			return err
		}
		defer d.stop()
		endpoint = d.endpoint()
	}
	cl, err := connectHTTP(ctx, endpoint)
	if err != nil {
		return err
	}
	defer cl.close()
	if want["rtt"] {
		fmt.Fprintf(out, "[2] round trips: %d calls per tool, HTTP and stdio\n", o.calls)
		r, err := benchRoundTrip(ctx, cl, "HTTP", o.calls)
		if err != nil {
			return fmt.Errorf("round trips over HTTP: %w", err)
		}
		res.rtt = append(res.rtt, r)
	}
	if want["rtt"] && !o.inprocess {
		sc, err := connectStdio(ctx, stdioCommand(bin, tmp+"/stdio.db"))
		if err != nil {
			return err
		}
		r, err := benchRoundTrip(ctx, sc, "stdio", o.calls)
		sc.close()
		if err != nil {
			return fmt.Errorf("round trips over stdio: %w", err)
		}
		res.rtt = append(res.rtt, r)
	}
	if want["artifact"] {
		fmt.Fprintf(out, "[4] get_artifact: %d MiB binary over HTTP, 3 reads\n", o.artifactMB)
		if res.artifact, err = benchArtifact(ctx, cl, dbPath, o.artifactMB<<20, 3); err != nil {
			return fmt.Errorf("artifact: %w", err)
		}
	}
	return nil
}
