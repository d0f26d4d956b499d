package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCLIShortIDs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	// Runs with an artifact each, until two run ids and two artifact ids
	// share their first character (17 runs at most: 16 hex digits).
	var runs, arts []string
	sameFirst := func(ids []string, prefix string) (string, string, bool) {
		first := map[byte]string{}
		for _, id := range ids {
			c := strings.TrimPrefix(id, prefix)[0]
			if other, ok := first[c]; ok {
				return other, id, true
			}
			first[c] = id
		}
		return "", "", false
	}
	for len(runs) < 17 {
		out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "content=hello "+string(rune('a'+len(runs))))
		if code != 0 {
			t.Fatalf("run: exit %d %s", code, errs)
		}
		r := runJSON(t, out)
		runs = append(runs, r["runId"].(string))
		arts = append(arts, r["artifactIds"].([]any)[0].(string))
		_, _, r2 := sameFirst(runs, "run_")
		_, _, a2 := sameFirst(arts, "art_")
		if r2 && a2 {
			break
		}
	}
	short := func(id string) string { return id[strings.IndexByte(id, '_')+1:][:8] }

	// The 8 characters the dashboard shows, with or without "run_".
	for _, arg := range []string{short(runs[0]), "run_" + short(runs[0]), strings.ToUpper(short(runs[0]))} {
		out, errs, code := cli(t, "", "show", arg, "--db", db, "--dev-templates")
		if code != 0 || runJSON(t, out)["runId"] != runs[0] {
			t.Fatalf("show %s: exit %d %s%s", arg, code, out, errs)
		}
	}
	_, errs, code := cli(t, "", "answer", short(runs[1]), "x", "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, "run "+runs[1]+" is succeeded and waits for no answer") {
		t.Fatalf("answer by short id: exit %d %q", code, errs)
	}
	out, errs, code := cli(t, "", "cancel", short(runs[1]), "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(out, `"runId": "`+runs[1]+`"`) || !strings.Contains(out, "run already succeeded") {
		t.Fatalf("cancel by short id: exit %d %s%s", code, out, errs)
	}
	file := filepath.Join(t.TempDir(), "a.txt")
	if _, errs, code := cli(t, "", "artifact", short(arts[2%len(arts)]), "-o", file, "--db", db, "--dev-templates"); code != 0 {
		t.Fatalf("artifact by short id: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello "+string(rune('a'+2%len(arts))) {
		t.Fatalf("artifact file %q", b)
	}

	// Ambiguous: the error names the candidates.
	a, b, _ := sameFirst(runs, "run_")
	prefix := strings.TrimPrefix(a, "run_")[:1]
	_, errs, code = cli(t, "", "show", prefix, "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, `run id "`+prefix+`" is ambiguous: it starts `) || !strings.Contains(errs, "give more of the id") ||
		!strings.Contains(errs, "\n  "+a+"  succeeded  dev_echo  ") || !strings.Contains(errs, "\n  "+b+"  succeeded  dev_echo  ") {
		t.Fatalf("ambiguous run prefix: exit %d %q", code, errs)
	}
	a, b, _ = sameFirst(arts, "art_")
	prefix = "art_" + strings.TrimPrefix(a, "art_")[:1]
	_, errs, code = cli(t, "", "artifact", prefix, "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, `artifact id "`+prefix+`" is ambiguous`) ||
		!strings.Contains(errs, "\n  "+a+"  (run ") || !strings.Contains(errs, "\n  "+b+"  (run ") {
		t.Fatalf("ambiguous artifact prefix: exit %d %q", code, errs)
	}

	// No match: the usual not-found errors.
	none := "0000ffff"
	for _, id := range runs {
		if strings.HasPrefix(id, "run_"+none) {
			t.Skip("a run id starts with " + none)
		}
	}
	_, errs, code = cli(t, "", "show", none, "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, `RUN_NOT_FOUND: run "`+none+`" does not exist or has expired`) || !strings.Contains(errs, "recovery:") {
		t.Fatalf("unknown short id: exit %d %q", code, errs)
	}
	_, errs, code = cli(t, "", "artifact", none, "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, "ARTIFACT_NOT_FOUND") {
		t.Fatalf("unknown artifact short id: exit %d %q", code, errs)
	}
}

func TestCLIShortArtifactIDOfAForgottenRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--run-ttl-ms", "200", "--input", "content=kept")
	if code != 0 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	r := runJSON(t, out)
	runID, art := r["runId"].(string), r["artifactIds"].([]any)[0].(string)
	// Another process's janitor forgets the run (its artifact stays).
	other := startCLI(t, strings.NewReader(""), "run", "dev_echo", "--dev-templates", "--db", db, "--janitor-interval-ms", "20", "--input", "sleepMs=60000")
	other.stderr.waitFor(t, regexp.MustCompile(`run_\S+ running`), other.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, errs, _ := cli(t, "", "show", runID, "--db", db, "--dev-templates"); strings.Contains(errs, "RUN_NOT_FOUND") {
			break
		}
		select {
		case <-tick.C:
		case <-other.done:
			t.Fatalf("the other run ended before the run was forgotten:\n%s", other.stderr)
		}
	}
	file := filepath.Join(t.TempDir(), "a.txt")
	if _, errs, code := cli(t, "", "artifact", art[4:12], "-o", file, "--db", db, "--dev-templates"); code != 0 {
		t.Fatalf("artifact of a forgotten run by short id: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(file); string(b) != "kept" {
		t.Fatalf("artifact file %q", b)
	}
}
