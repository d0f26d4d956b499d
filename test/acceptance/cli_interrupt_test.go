package acceptance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCLICtrlCListsKeptPagesAndTheNextRunContinues interrupts `browsertask
// run` with SIGINT (Ctrl-C) mid-run: the Run JSON it prints names the
// pages.json it kept, stderr lists it, and the same command again says on
// stderr that it continues the canceled run.
func TestCLICtrlCListsKeptPagesAndTheNextRunContinues(t *testing.T) {
	srv := fixture.New(t)
	db := filepath.Join(t.TempDir(), "bt.db")
	var urls []string
	for i := range 40 {
		urls = append(urls, srv.URL(fmt.Sprintf("/slow?ms=250&i=%d", i)))
	}
	args := []string{"run", "batch_extract_pages", "--db", db, "--render", "http", "--input", "concurrency=1",
		"--input", "urls=" + strings.Join(urls, ",")}
	cmd := exec.Command(bbBinary, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ctrl-C once at least 3 pages are done.
	var errText strings.Builder
	sc := bufio.NewScanner(stderr)
	progress := regexp.MustCompile(` (\d+)/40`)
	signaled := false
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
		if m := progress.FindStringSubmatch(sc.Text()); m != nil && !signaled {
			if n, _ := strconv.Atoi(m[1]); n >= 3 {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				signaled = true
			}
		}
	}
	err = cmd.Wait()
	if !signaled {
		t.Fatalf("no progress to interrupt at: %v\n%s", err, errText.String())
	}
	r := runJSON(t, out.String())
	arts, _ := r["artifactIds"].([]any)
	done := int(r["progress"].(map[string]any)["doneSteps"].(float64))
	if r["status"] != "canceled" || len(arts) != 1 || done < 3 || done >= 40 {
		t.Fatalf("interrupted run: status %v, artifacts %v, done %d\n%s", r["status"], arts, done, errText.String())
	}
	if !strings.Contains(errText.String(), "kept 1 artifact(s):\n  "+arts[0].(string)+"  pages.json  ") {
		t.Fatalf("stderr does not list pages.json:\n%s", errText.String())
	}
	// The same command continues, and says so.
	out2, errs, code := cli(t, "", args...)
	r2 := runJSON(t, out2)
	want := fmt.Sprintf("continuing %s: %d pages already done", r["runId"], done)
	if code != 0 || r2["status"] != "succeeded" || !strings.Contains(errs, want) {
		t.Fatalf("again: exit %d, status %v; want %q in\n%s", code, r2["status"], want, errs)
	}
}
