package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"golang.org/x/sync/errgroup"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// cdpVariant is the bare baseline plus some of the per-tab CDP features
// the browser package turns on, to price each one on this machine.
type cdpVariant struct {
	name     string
	network  bool // Network.enable and a NetworkResponseReceived listener per navigation
	fetch    bool // Fetch.enable, every request paused and continued from Go
	fetchNo  bool // Fetch.enable with a pattern no request matches (a port nothing uses)
	autoAtt  bool // Target.setAutoAttach{waitForDebuggerOnStart}
	session  bool // the browser package's own tab pool, Navigate and Eval
	then     bool // session, with the extraction in NavigateThen as batch_extract_pages does
	describe string
}

var cdpVariants = []cdpVariant{
	{name: "bare", describe: "navigate + wait load + extract, nothing else"},
	{name: "network", network: true, describe: "+ Network.enable, a response listener per navigation"},
	{name: "fetch", fetch: true, describe: "+ Fetch.enable: each request paused and continued from Go"},
	{name: "fetchport", fetchNo: true, describe: "+ Fetch.enable for one unused port only (trust local's daemon-port pattern)"},
	{name: "autoattach", autoAtt: true, describe: "+ Target.setAutoAttach{waitForDebuggerOnStart}"},
	{name: "all", network: true, fetch: true, autoAtt: true, describe: "network + fetch + autoattach"},
	{name: "session", session: true, describe: "browser.Session: AcquireTab, Navigate(load), Eval — no engine, DB or MCP"},
	{name: "sessionthen", session: true, then: true, describe: "browser.Session: AcquireTab, NavigateThen(load, extraction) with a per-page deadline"},
}

// benchBrowserCost is a diagnostic (-only browsercost): it prices CDP
// features a tab may use (Network events, Fetch interception of every
// request or of one port only, auto-attach of child targets) and the
// browser package's own path (tab pool, Navigate, Eval; NavigateThen) by
// running the bare baseline with each of them, and batch_extract_pages
// through MCP, in rotation, all in the daemon's own browser; it prints each
// one's median pages/s, median ratio to the bare run of the same repeat and
// CPU per page (Chromium's processes, this process).
func benchBrowserCost(ctx context.Context, o *options, log *slog.Logger, out io.Writer) error {
	js, err := templateExtractJS()
	if err != nil {
		return err
	}
	pages := pageServer()
	defer pages.Close()
	dir, err := os.MkdirTemp("", "browsertask-bench-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startInproc(ctx, dir, engine.DefaultConfig(), log)
	if err != nil {
		return err
	}
	defer srv.stop()
	cl, err := connectHTTP(ctx, srv.endpoint())
	if err != nil {
		return err
	}
	defer cl.close()
	bm := srv.bm // the daemon's own browser, as the extraction benchmark uses
	salt := 100
	if _, err := engineExtract(ctx, cl, pageURLs(pages, min(20, o.pages), salt), o.tabs, nil); err != nil {
		return err
	}
	speed := map[string][]float64{}
	cpu := map[string][]float64{}   // browser CPU ms per page
	goCPU := map[string][]float64{} // this process's CPU ms per page
	measure := func(name string, f func() (time.Duration, error)) error {
		s0, b0 := cpuTimes(bm.PIDs())
		d, err := f()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s1, b1 := cpuTimes(bm.PIDs())
		speed[name] = append(speed[name], float64(o.pages)/d.Seconds())
		cpu[name] = append(cpu[name], (b1-b0)*1000/float64(o.pages))
		goCPU[name] = append(goCPU[name], (s1-s0)*1000/float64(o.pages))
		return nil
	}
	variants := cdpVariants
	if o.variants != "" {
		variants = nil
		for _, v := range cdpVariants {
			if v.name == "bare" || strings.Contains(","+o.variants+",", ","+v.name+",") {
				variants = append(variants, v)
			}
		}
	}
	for r := 0; r < o.repeats; r++ {
		for _, v := range variants {
			salt++
			urls := pageURLs(pages, o.pages, salt)
			if err := measure(v.name, func() (time.Duration, error) {
				return variantRun(ctx, bm, js, urls, o.tabs, v, salt)
			}); err != nil {
				return err
			}
		}
		salt++
		urls := pageURLs(pages, o.pages, salt)
		if err := measure("browsertask", func() (time.Duration, error) {
			return engineExtract(ctx, cl, urls, o.tabs, nil)
		}); err != nil {
			return err
		}
		fmt.Fprintf(out, "  repeat %d done\n", r+1)
	}
	fmt.Fprintf(out, "CDP feature cost, %d pages, %d tabs, %d repeats (ratio = pages/s ÷ bare's in the same repeat):\n", o.pages, o.tabs, o.repeats)
	rows := append(append([]cdpVariant(nil), variants...), cdpVariant{name: "browsertask", describe: "batch_extract_pages through MCP"})
	for _, v := range rows {
		var rs []float64
		for i, x := range speed[v.name] {
			rs = append(rs, ratio(x, speed["bare"][i]))
		}
		fmt.Fprintf(out, "  %-12s %5.1f pages/s  ratio %.2f %s  CPU ms/page browser %.1f + this process %.1f  %s\n", v.name,
			median(speed[v.name]), median(rs), floats(rs, "%.2f"), median(cpu[v.name]), median(goCPU[v.name]), v.describe)
	}
	return nil
}

// variantRun is baseline.run with the variant's CDP features on every tab.
func variantRun(ctx context.Context, bm *browser.Manager, js string, urls []string, tabs int, v cdpVariant, salt int) (time.Duration, error) {
	start := time.Now()
	s, err := bm.Session(ctx, fmt.Sprintf("bench_cost_%d", salt))
	if err != nil {
		return 0, err
	}
	defer bm.CloseSession(context.Background(), s.ID())
	rb := s.Browser()
	script := fmt.Sprintf(js, extractConfig())
	if v.session {
		return sessionRun(ctx, s, urls, script, tabs, start, v.then)
	}
	jobs := make(chan int, len(urls))
	for i := range urls {
		jobs <- i
	}
	close(jobs)
	out := make([]json.RawMessage, len(urls))
	var g errgroup.Group
	for w := 0; w < tabs; w++ {
		g.Go(func() error { return variantWorker(ctx, rb, urls, script, jobs, out, v) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return time.Since(start), checkPages(urls, out)
}

// variantWorker opens a tab, turns the variant's features on and extracts
// jobs in it.
func variantWorker(ctx context.Context, rb *rod.Browser, urls []string, script string, jobs <-chan int, out []json.RawMessage, v cdpVariant) error {
	p, err := openTab(ctx, rb)
	if err != nil {
		return err
	}
	if v.network {
		if err := (proto.NetworkEnable{}).Call(p); err != nil {
			return err
		}
	}
	if v.fetch || v.autoAtt {
		go p.EachEvent(func(e *proto.FetchRequestPaused) {
			go func() { _ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(p) }()
		})()
	}
	if v.fetch {
		if err := (proto.FetchEnable{}).Call(p); err != nil {
			return err
		}
	}
	if v.fetchNo {
		if err := (proto.FetchEnable{Patterns: []*proto.FetchRequestPattern{{URLPattern: "*:1/*"}}}).Call(p); err != nil {
			return err
		}
	}
	if v.autoAtt {
		if err := (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}).Call(p); err != nil {
			return err
		}
	}
	for i := range jobs {
		stop := func() {}
		if v.network {
			lctx, cancel := context.WithCancel(ctx)
			stop = cancel
			go p.Context(lctx).EachEvent(func(*proto.NetworkResponseReceived) {})()
		}
		err := extractOne(p, urls[i], script, &out[i])
		stop()
		if err != nil {
			return err
		}
	}
	return nil
}

// extractOne is the baseline's per-URL work: navigate, wait for load,
// evaluate the extraction script.
func extractOne(p *rod.Page, url, script string, dst *json.RawMessage) error {
	nav, err := proto.PageNavigate{URL: url}.Call(p)
	if err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	if _, err := (proto.RuntimeEvaluate{Expression: waitLoadJS, AwaitPromise: true, ReturnByValue: true}).Call(p); err != nil {
		return err
	}
	r, err := proto.RuntimeEvaluate{Expression: script, AwaitPromise: true, ReturnByValue: true}.Call(p)
	if err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("extract %s: %s", url, r.ExceptionDetails.Text)
	}
	raw, err := json.Marshal(r.Result.Value)
	if err != nil {
		return err
	}
	*dst = raw
	return nil
}

// sessionRun extracts urls through the browser package's session API, the
// path batch_extract_pages takes, without the engine around it.
func sessionRun(ctx context.Context, s *browser.Session, urls []string, script string, tabs int, start time.Time, then bool) (time.Duration, error) {
	jobs := make(chan int, len(urls))
	for i := range urls {
		jobs <- i
	}
	close(jobs)
	out := make([]json.RawMessage, len(urls))
	errs := make(chan error, tabs)
	for w := 0; w < tabs; w++ {
		go func() {
			tb, err := s.AcquireTab(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer tb.Release(true)
			for i := range jobs {
				if then {
					pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					_, raw, err := tb.NavigateThen(pctx, urls[i], browser.WaitLoad, script)
					cancel()
					if err != nil {
						errs <- err
						return
					}
					out[i] = raw
					continue
				}
				if _, err := tb.Navigate(ctx, urls[i], browser.WaitLoad); err != nil {
					errs <- err
					return
				}
				raw, err := tb.Eval(ctx, script)
				if err != nil {
					errs <- err
					return
				}
				out[i] = raw
			}
			errs <- nil
		}()
	}
	for w := 0; w < tabs; w++ {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	return time.Since(start), checkPages(urls, out)
}
