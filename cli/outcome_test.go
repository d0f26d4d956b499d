package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestCLIRunSaysWhyItFailed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	// A failure without kept items: the code, the message and the steps done.
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "items=2", "--input", "fail=true")
	id := runJSON(t, out)["runId"].(string)
	if want := id + " failed: STEP_EXECUTION_FAILED — dev_echo was asked to fail (2/2 steps done)"; code != 1 || lastLine(errs) != want {
		t.Fatalf("exit %d, stderr's last line\n %q\nwant\n %q\nstderr:\n%s", code, lastLine(errs), want, errs)
	}
	if strings.Contains(errs, id+" failed 2/2") || strings.Count(errs, " failed") != 1 {
		t.Fatalf("the outcome should be said once, with its reason:\n%s", errs)
	}

	// A timeout: the message already says what the run kept, so the steps
	// done are not repeated.
	out, errs, code = cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db,
		"--input", "items=3", "--input", "sleepMs=450", "--timeout", "1s")
	r := runJSON(t, out)
	e := r["error"].(map[string]any)
	if code != 1 || e["errorCode"] != "RUN_TIMEOUT" {
		t.Fatalf("exit %d, run %v\n%s", code, r, errs)
	}
	want := r["runId"].(string) + " failed: RUN_TIMEOUT — " + e["message"].(string)
	if lastLine(errs) != want {
		t.Fatalf("stderr's last line\n %q\nwant\n %q", lastLine(errs), want)
	}
	m := regexp.MustCompile(`^the run exceeded options\.timeoutMs=1000 ms while running and was stopped \(kept (\d) finished item\(s\), 0 failed, (\d) not started\)$`).
		FindStringSubmatch(e["message"].(string))
	if m == nil || m[1] == "0" || fmt.Sprint(r["progress"].(map[string]any)["doneSteps"]) != m[1] {
		t.Fatalf("timeout message %q, progress %v", e["message"], r["progress"])
	}
	if strings.Contains(lastLine(errs), "steps done") {
		t.Fatalf("the kept items are said twice: %q", lastLine(errs))
	}
}

func TestCLIRunSaysWhyItWasCanceled(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	run := startCLI(t, strings.NewReader(""), "run", "dev_echo", "--dev-templates", "--db", db, "--input", "sleepMs=60000")
	id := run.stderr.waitFor(t, regexp.MustCompile(`(run_[0-9a-f-]{36}) running[ \n]`), run.done)[1]
	if _, errs, code := cli(t, "", "cancel", id, "--reason", "wrong URLs", "--db", db, "--dev-templates"); code != 0 {
		t.Fatalf("cancel: exit %d %s", code, errs)
	}
	out, code := run.wait(t)
	if r := runJSON(t, out); code != 1 || r["status"] != "canceled" {
		t.Fatalf("run: exit %d %v", code, r)
	}
	want := regexp.MustCompile("^" + id + " canceled: RUN_CANCELED — the run was cancel+ed: wrong URLs$")
	if got := lastLine(run.stderr.String()); !want.MatchString(got) {
		t.Fatalf("stderr's last line\n %q\nwant\n %q\nstderr:\n%s", got, want, run.stderr)
	}
	if strings.Contains(run.stderr.String(), "0/0") {
		t.Fatalf("a run that counted nothing shows no 0/0:\n%s", run.stderr)
	}
}

// progressRun is a run in status st with progress done/total.
func progressRun(st engine.RunStatus, done, total, failed int, msg string) *engine.Run {
	return &engine.Run{RunID: "run_p", Status: st, Progress: engine.Progress{DoneSteps: done, TotalSteps: total, FailedSteps: failed, Message: msg}}
}

// crawlAfterResume is what a resumed crawl reports: an earlier attempt
// showed 30 of 40 pages; the new one replays its levels from the
// checkpoints (1/1, 5/5, ...), finds more links (the total grows) and ends
// with every page done, its last message still saying more may be found.
func crawlAfterResume() []*engine.Run {
	return []*engine.Run{
		progressRun(engine.StatusQueued, 0, 0, 0, ""),
		progressRun(engine.StatusRunning, 30, 40, 1, "30/40 pages (more may be found)"),
		progressRun(engine.StatusRunning, 1, 1, 0, "1/1 pages (more may be found)"),
		progressRun(engine.StatusRunning, 5, 12, 0, "5/12 pages (more may be found)"),
		progressRun(engine.StatusRunning, 33, 40, 1, "33/40 pages (more may be found)"),
		progressRun(engine.StatusRunning, 41, 55, 1, "41/55 pages (more may be found)"),
		progressRun(engine.StatusSucceeded, 55, 55, 1, "55/55 pages (more may be found)"),
	}
}

// doneCounts returns the "done/total" counts of every line or frame.
func doneCounts(t *testing.T, text string) [][2]int {
	t.Helper()
	var out [][2]int
	for _, m := range regexp.MustCompile(`(\d+)/(\d+)`).FindAllStringSubmatch(text, -1) {
		var d, n int
		fmt.Sscan(m[1], &d)
		fmt.Sscan(m[2], &n)
		out = append(out, [2]int{d, n})
	}
	return out
}

func TestCLIProgressNeverGoesBackwards(t *testing.T) {
	// Plain lines (stderr not a terminal).
	var plain bytes.Buffer
	p := newProgressPrinter(&plain, false)
	runs := crawlAfterResume()
	for _, r := range runs {
		p.last = p.last.Add(-2e9) // each update is a second after the last
		p.update(r)
	}
	p.done(runs[len(runs)-1])
	want := "run_p queued\n" +
		"run_p running 30/40 pages (more may be found) (1 failed)\n" +
		"run_p running 30/40 (1 failed)\n" + // the replay's 1/1 and 5/12 are held
		"run_p running 30/40 (1 failed)\n" +
		"run_p running 33/40 pages (more may be found) (1 failed)\n" +
		"run_p running 41/55 pages (more may be found) (1 failed)\n" +
		"run_p succeeded 55/55 (1 failed)\n"
	if plain.String() != want {
		t.Fatalf("plain progress:\n%s\nwant:\n%s", plain.String(), want)
	}

	// The bar on a terminal: counts never go back, the filled part never
	// shrinks, and it is not drawn while the total grows.
	var screen bytes.Buffer
	p = newProgressPrinter(&screen, true)
	for _, r := range runs {
		p.update(r)
	}
	p.done(runs[len(runs)-1])
	frames := strings.Split(screen.String(), "\r\033[K")[1:]
	if len(frames) != len(runs)+1 {
		t.Fatalf("%d frames for %d updates and done:\n%q", len(frames), len(runs), screen.String())
	}
	prevDone, prevFill := 0, 0
	for i, f := range frames {
		for _, c := range doneCounts(t, f) {
			if c[0] < prevDone {
				t.Fatalf("frame %d went back from %d to %d: %q", i, prevDone, c[0], f)
			}
			prevDone = c[0]
		}
		fill := strings.Count(f, "█")
		if fill < prevFill && strings.Contains(f, "░") {
			t.Fatalf("frame %d: the bar shrank from %d to %d cells: %q", i, prevFill, fill, f)
		}
		prevFill = max(prevFill, fill)
		if strings.Contains(f, "0/0") {
			t.Fatalf("frame %d shows 0/0: %q", i, f)
		}
	}
	if strings.Contains(frames[5], "█") || strings.Contains(frames[5], "░") {
		t.Fatalf("no bar while the total grows: %q", frames[5])
	}
	last := frames[len(frames)-1]
	if !strings.HasPrefix(last, strings.Repeat("█", barWidth)+" 55/55 (1 failed) succeeded") || strings.Contains(last, "more may be found") {
		t.Fatalf("the finished crawl's line: %q", last)
	}
}

func TestCLIRunsShowsNoZeroOfZeroAndEndsItsLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	for range 3 {
		if _, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--async", "--input", "items=2"); code != 0 {
			t.Fatalf("submit: exit %d %s", code, errs)
		}
	}
	out, errs, code := cli(t, "", "runs", "--db", db, "--dev-templates", "--limit", "2")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 4 || lines[3] != "" {
		t.Fatalf("runs: exit %d\n%q", code, out)
	}
	for _, l := range lines[1:3] {
		if !regexp.MustCompile(`^run_[0-9a-f-]{36}  queued  dev_echo  -  `).MatchString(l) || strings.Contains(l, "0/0") {
			t.Fatalf("a queued run's row %q, want progress -", l)
		}
	}
	if errs != "2 of 3 runs shown (use --limit)\n" {
		t.Fatalf("footer %q", errs)
	}
}

func TestCLISharedFlagsStateEachDefaultOnce(t *testing.T) {
	for _, cmd := range []string{"run", "runs", "show", "templates"} {
		_, errs, _ := cli(t, "", cmd, "--help")
		var browser string
		for _, l := range strings.Split(errs, "\n") {
			if strings.HasPrefix(l, "  --browser\t") {
				browser = l
			}
			if strings.HasPrefix(l, "  --dev-templates\t") && strings.Contains(l, "default") {
				t.Errorf("%s --help: %q states an off switch's default", cmd, l)
			}
		}
		if browser == "" || strings.Count(browser, "default") != 1 {
			t.Errorf("%s --help: --browser line %q should state its default once", cmd, browser)
		}
	}
}
