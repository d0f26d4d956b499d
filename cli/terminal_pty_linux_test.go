package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ptyResult is what a command run with a terminal showed.
type ptyResult struct {
	screen string // what the terminal shows ("\r\n" line ends)
	out    string // stdout, when it was not the terminal
	errs   string // stderr, when it was not the terminal
	code   int
}

// onTerminal runs a browsertask command as its own process (the test
// binary as TestCLIHelperProcess) with stdout and/or stderr on a
// pseudo-terminal, the other one a pipe.
func onTerminal(t *testing.T, stdoutTTY, stderrTTY bool, args ...string) ptyResult {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCLIHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BT_CLI_HELPER_ARGS="+string(raw), "HOME="+t.TempDir())
	var out, errs bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errs
	if stdoutTTY {
		cmd.Stdout = slave
	}
	if stderrTTY {
		cmd.Stderr = slave
	}
	screen := newSignalBuffer()
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(screen, master) }()
	err := cmd.Run()
	slave.Close()
	<-copied
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return ptyResult{screen: screen.String(), out: out.String(), errs: errs.String(), code: code}
}

func TestCLIArtifactRefusesBinaryOnATerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db,
		"--input", "contentBase64="+base64.StdEncoding.EncodeToString(png), "--input", "mimeType=image/png")
	if code != 0 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	img := runJSON(t, out)["artifactIds"].([]any)[0].(string)
	out, _, _ = cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "content=hello text")
	txt := runJSON(t, out)["artifactIds"].([]any)[0].(string)

	r := onTerminal(t, true, false, "artifact", img, "--db", db, "--dev-templates")
	want := "artifact " + img + " (content) is image/png, " + strconv.Itoa(len(png)) + " bytes: binary data is not written to a terminal; save it with -o FILE (e.g. browsertask artifact " + img + " -o content.png) or redirect stdout"
	if r.code != 1 || !strings.Contains(r.errs, want) || r.screen != "" {
		t.Fatalf("binary to a terminal: exit %d, stderr %q, screen %q; want %q", r.code, r.errs, r.screen, want)
	}
	// Text is shown; binary goes to -o FILE and to a pipe.
	if r := onTerminal(t, true, false, "artifact", txt, "--db", db, "--dev-templates"); r.code != 0 || r.screen != "hello text" {
		t.Fatalf("text to a terminal: exit %d, screen %q, stderr %q", r.code, r.screen, r.errs)
	}
	file := filepath.Join(t.TempDir(), "p.png")
	if r := onTerminal(t, true, false, "artifact", img, "-o", file, "--db", db, "--dev-templates"); r.code != 0 {
		t.Fatalf("-o on a terminal: exit %d %q", r.code, r.errs)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, png) {
		t.Fatalf("-o wrote %q", b)
	}
	if out, errs, code := cli(t, "", "artifact", img, "--db", db, "--dev-templates"); code != 0 || out != string(png) {
		t.Fatalf("binary to a pipe: exit %d %q %s", code, out, errs)
	}
}

func TestCLIRunProgressBarOnATerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	r := onTerminal(t, false, true, "run", "dev_echo", "--dev-templates", "--db", db,
		"--input", "items=4", "--input", "sleepMs=150", "--input", "fail=true")
	if r.code != 1 || runJSON(t, r.out)["status"] != "failed" {
		t.Fatalf("run: exit %d\n%s\nscreen %q", r.code, r.out, r.screen)
	}
	t.Logf("terminal: %q", r.screen)
	frames := strings.Split(r.screen, "\r\033[K")
	if len(frames) < 3 || frames[0] != "" {
		t.Fatalf("the bar should be redrawn in place: %q", r.screen)
	}
	prev := 0
	for _, f := range frames[1:] {
		if strings.Contains(f, "0/0") {
			t.Fatalf("a frame shows 0/0: %q", f)
		}
		for _, c := range doneCounts(t, f) {
			if c[0] < prev || c[1] != 4 {
				t.Fatalf("frame %q after %d/4", f, prev)
			}
			prev = c[0]
		}
	}
	last := frames[len(frames)-1]
	if !strings.HasPrefix(last, strings.Repeat("█", barWidth)+" 4/4 failed ") ||
		!strings.HasSuffix(last, "\r\nfailed: STEP_EXECUTION_FAILED — dev_echo was asked to fail (4/4 steps done)\r\n") {
		t.Fatalf("the last frame and the reason: %q", last)
	}
}
