package acceptance

// Issue 4, acceptance 5, 7 (in-run restricted trust) and 9: a run on a
// second Chromium reached with --browser ws://…, a renderer crash in a step
// (CDP Page.crash from outside) → PAGE_CRASHED, the browser killed mid-run →
// EXECUTION_ERROR and the next run succeeds on a relaunched browser.

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startWaitingSteps submits an async run_steps that opens startURL and then
// waits (up to 30 s) for an element that never appears; it returns once the
// run is past startUrl.
func startWaitingSteps(t *testing.T, cs *sdk.ClientSession, startURL string) string {
	t.Helper()
	id := submitAsync(t, cs, "run_steps", obj{"startUrl": startURL,
		"steps": []any{obj{"action": "wait_for", "selector": "#never", "timeoutMs": 30000}}}, nil)
	waitRun(t, cs, id, "startUrl loaded", func(r obj) bool {
		return terminal(r["status"]) || num(sub(r, "progress"), "doneSteps") >= 1
	})
	return id
}

func TestBlackboxRemoteBrowser(t *testing.T) {
	t.Parallel()
	// The second Chromium maps public.test to 127.0.0.1, and the daemon's
	// policy is told (a DNS test double, --dev-resolve) that the name is
	// public, so a page can look public to the policy while its redirect
	// targets loopback. A remote browser takes no proxy flags: the
	// in-browser request check is what refuses the redirect here.
	ws := startCDPChromium(t, "--host-resolver-rules=MAP public.test 127.0.0.1")
	fx := fixture.New(t)
	port := fx.Host()[strings.LastIndexByte(fx.Host(), ':')+1:]
	pub := func(path string) string { return "http://public.test:" + port + path }
	cs := connectHTTP(t, startServe(t, "--browser", ws, "--trust", "restricted", "--dev-resolve", "public.test=93.184.216.34"), nil)

	// Acceptance 9: the run executes on the remote browser.
	res := runOK(t, cs, "batch_extract_pages", "", obj{"urls": []any{pub("/page/4")}, "fields": obj{"name": "#name"}})
	if f := res["pages"].([]any)[0].(obj)["fields"].(obj); f["name"] != "Item 4" {
		t.Fatalf("remote run: %v", res)
	}
	if b := sub(callOK(t, cs, "get_runtime_profile", nil), "browser"); b["mode"] != "remote" || !strings.Contains(b["product"].(string), "Chrome") {
		t.Fatalf("profile browser: %v", b)
	}

	// Acceptance 7: under restricted trust, a redirect into loopback during
	// the run is that page's TRUST_LEVEL_NOT_ALLOWED, and is never fetched.
	e := runFails(t, cs, "batch_extract_pages", "", obj{"urls": []any{pub("/redirect?to=" + fx.URL("/page/77"))}}, "STEP_EXECUTION_FAILED")
	pe := sub(e, "details")["errors"].([]any)[0].(obj)
	if pe["errorCode"] != "TRUST_LEVEL_NOT_ALLOWED" || fx.Hits("/page/77") != 0 {
		t.Fatalf("redirect into loopback: %v (hits %d)", pe, fx.Hits("/page/77"))
	}

	// Acceptance 5: the tab's renderer crashes during a step.
	id := startWaitingSteps(t, cs, pub("/form?crash=1"))
	b := rod.New().ControlURL(ws)
	if err := b.Connect(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var target *rod.Page
	fixture.WaitUntil(t, "the run's tab (crash=1) on the remote browser", func() bool {
		pages, _ := b.Pages()
		for _, pg := range pages {
			if info, err := pg.Info(); err == nil && strings.Contains(info.URL, "crash=1") {
				target = pg
			}
		}
		return target != nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = proto.PageCrash{}.Call(target.Context(ctx)) // never answers: the renderer is gone
	cancel()
	run := waitTerminal(t, cs, id)
	d := sub(sub(run, "error"), "details")
	if run["status"] != "failed" || errCode(run) != "PAGE_CRASHED" || num(d, "stepIndex") != 0 || d["action"] != "wait_for" {
		t.Fatalf("crashed tab: %v %v", run["status"], run["error"])
	}
	// The session's other tabs, and new runs, still work.
	runOK(t, cs, "batch_extract_pages", "", obj{"urls": []any{pub("/page/5")}})
}

func TestBlackboxBrowserKilled(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	id := startWaitingSteps(t, cs, fx.URL("/form"))
	killed := 0
	for _, pid := range descendants(p.cmd.Process.Pid) {
		if c := cmdline(pid); strings.Contains(c, "--user-data-dir=") && !strings.Contains(c, "--type=") {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d browser main processes, want 1", killed)
	}
	run := waitTerminal(t, cs, id)
	if run["status"] != "failed" || errCode(run) != "EXECUTION_ERROR" {
		t.Fatalf("run with its browser killed: %v %v", run["status"], run["error"])
	}
	res := runOK(t, cs, "batch_extract_pages", "", obj{"urls": []any{fx.URL("/page/6")}, "fields": obj{"name": "#name"}})
	if f := res["pages"].([]any)[0].(obj)["fields"].(obj); f["name"] != "Item 6" {
		t.Fatalf("run after relaunch: %v", res)
	}
	if !p.logLine("browser is gone; relaunching") && !p.logLine("browser ready") {
		t.Fatal("no relaunch in the log")
	}
}
