package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCLIRunOptionsAsFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bt.db")
	base := []string{"run", "dev_echo", "--dev-templates", "--db", db, "--input", "items=2"}

	// --options gives the MCP options object; --idempotency-key wins over it
	// and a second submission with the key follows the same run.
	opts := filepath.Join(dir, "opts.json")
	if err := os.WriteFile(opts, []byte(`{"mode":"sync","timeoutMs":60000,"idempotencyKey":"from-file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, "", append(base, "--options", opts, "--idempotency-key", "k1")...)
	first := runJSON(t, out)
	if code != 0 || first["status"] != "succeeded" {
		t.Fatalf("exit %d %v\n%s", code, first, errs)
	}
	out, errs, code = cli(t, "", append(base, "--idempotency-key", "k1")...)
	again := runJSON(t, out)
	if code != 0 || again["runId"] != first["runId"] || !strings.Contains(errs, first["runId"].(string)+" already exists for this idempotency key") {
		t.Fatalf("same key: exit %d, run %v (first %v)\n%s", code, again["runId"], first["runId"], errs)
	}
	out, _, _ = cli(t, "", append(base, "--options", opts)...)
	if r := runJSON(t, out); r["runId"] == first["runId"] {
		t.Fatalf("the file's key %q is another key, got the k1 run", "from-file")
	}

	// --mode async is --async: the runId at once.
	out, _, code = cli(t, "", append(base, "--mode", "async")...)
	if code != 0 || !regexp.MustCompile(`^run_[0-9a-f-]+\n$`).MatchString(out) {
		t.Fatalf("--mode async: exit %d %q", code, out)
	}

	// Refusals name the flag and the fix.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "later"}, `--mode must be sync, async or auto, got "later"`},
		{[]string{"--options", `{"mode": }`}, "--options: inline JSON is not valid JSON: line 1, column 10 (after `{\"mode\":`): invalid character '}'"},
		{[]string{"--options", `{"timeout": 5}`}, `--options: json: unknown field "timeout" (the keys are mode, timeoutMs, idempotencyKey, outputSchema)`},
		{[]string{"--output-schema", filepath.Join(dir, "missing.json")}, "--output-schema: open " + filepath.Join(dir, "missing.json") + ": no such file or directory (give a JSON object inline"},
		{[]string{"--render", "http"}, "--render: dev_echo has no render input (batch_extract_pages, crawl_site and extract_structured have one)"},
		{[]string{"--input", "sleepMs={\"a\":\n 1,}"}, "--input sleepMs=: the value is not valid JSON: line 2, column 4 (after `{\"a\": 1,`): invalid character '}'"},
		{[]string{"--save-session", filepath.Join(dir, "s.json")}, "--save-session needs a session: add --session new"},
	} {
		out, errs, code := cli(t, "", append(base, c.args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant %q", c.args, code, out, errs, c.want)
		}
	}

	// An object input given as plain text says it takes JSON.
	_, errs, _ = cli(t, "", "run", "batch_extract_pages", "--db", db, "--input", "urls=http://127.0.0.1:1/", "--input", "fields=heading:h1")
	if want := `--input fields=: fields takes a JSON object, e.g. --input 'fields={"heading":"h1"}' (see browsertask templates TEMPLATE), got "heading:h1"`; !strings.Contains(errs, want) {
		t.Errorf("fields as text: %q\nwant %q", errs, want)
	}
	// --inputs with broken JSON says where.
	bad := filepath.Join(dir, "inputs.json")
	if err := os.WriteFile(bad, []byte("{\n  \"items\": 2\n  \"content\": \"x\"\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, _ = cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--inputs", bad)
	if want := "want a JSON object: line 3, column 3 (after `{ \"items\": 2`): invalid character '\"' after object key:value pair"; !strings.Contains(errs, want) {
		t.Errorf("--inputs: %q\nwant %q", errs, want)
	}
}

func TestCLIRunJSONObeysTheAnswerBudget(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	args := []string{"run", "dev_echo", "--dev-templates", "--db", db, "--input", "pages=400", "--input", "textBytes=2000"}
	out, errs, code := cli(t, "", args...)
	r := runJSON(t, out)
	if code != 0 || len(out) > 80<<10 || !strings.Contains(errs, "--full prints it whole") {
		t.Fatalf("budgeted: exit %d, %d bytes of JSON (budget 64 KiB)\n%s", code, len(out), errs)
	}
	if res := r["result"].(map[string]any); res["truncated"] != true {
		t.Fatalf("the cut result should say truncated: %v", res)
	}
	out, errs, code = cli(t, "", append(args, "--full")...)
	if code != 0 || len(out) < 400*2000 || strings.Contains(errs, "--full prints it whole") {
		t.Fatalf("--full: exit %d, %d bytes\n%s", code, len(out), errs)
	}
}
