package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// shellWords splits a command line printed with shellQuote back into its
// words (plain words and single-quoted ones).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, c := range line {
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// exampleLine returns the command line under "Example:".
func exampleLine(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, "\nExample:\n  ")
	if !ok {
		t.Fatalf("no Example:\n%s", out)
	}
	line, _, _ := strings.Cut(after, "\n")
	return line
}

// inputsOf reads the --input flags of an example command line back into
// inputs, as browsertask run does with the template's schema.
func inputsOf(t *testing.T, words []string, schema json.RawMessage) map[string]any {
	t.Helper()
	var pairs []string
	for i := 3; i < len(words); i += 2 {
		if words[i] != "--input" || i+1 >= len(words) {
			t.Fatalf("word %d of %q is not --input key=value", i, words)
		}
		pairs = append(pairs, words[i+1])
	}
	raw, err := buildInputs(pairs, "", nil, schema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCLITemplatesNameDescribesTheInputs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "templates", "batch_extract_pages", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	if !strings.HasPrefix(out, "batch_extract_pages (version 1) — Extract data from a list of web pages\n") {
		t.Fatalf("heading:\n%s", out)
	}
	for _, want := range []string{
		"\nInputs (* = required):\n  urls*  array of string\n      Absolute http(s) URLs to open; duplicates are removed, order is kept.\n      The server's maxUrls also applies.\n",
		"\n  concurrency  integer 1..20, default 4\n      Tabs working in parallel (at most the server's maxTabsPerSession).\n",
		"\n  includeText  boolean, default true\n",
		"\n  waitFor  string, default \"load\"\n",
		"\n  fields  object\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("description lacks %q:\n%s", want, out)
		}
	}
	// The example command line gives the template's own example inputs.
	tpl := templateInfo(t, db, "batch_extract_pages")
	words := shellWords(t, exampleLine(t, out))
	if !reflect.DeepEqual(words[:3], []string{"browsertask", "run", "batch_extract_pages"}) {
		t.Fatalf("example %q", words)
	}
	var want map[string]any
	if err := json.Unmarshal(tpl.Examples[0], &want); err != nil {
		t.Fatal(err)
	}
	if got := inputsOf(t, words, tpl.InputSchema); !reflect.DeepEqual(got, want) {
		t.Fatalf("the example command line gives\n %v\nwant the template's example\n %v", got, want)
	}

	// A secret input says so; run_steps' steps (objects) round-trip too.
	out, _, _ = cli(t, "", "templates", "login", "--db", db)
	if !strings.Contains(out, "\n  password*  string, secret\n") {
		t.Fatalf("login's password:\n%s", out)
	}
	tpl = templateInfo(t, db, "run_steps")
	out, _, _ = cli(t, "", "templates", "run_steps", "--db", db)
	want = nil
	if err := json.Unmarshal(tpl.Examples[0], &want); err != nil {
		t.Fatal(err)
	}
	if got := inputsOf(t, shellWords(t, exampleLine(t, out)), tpl.InputSchema); !reflect.DeepEqual(got, want) {
		t.Fatalf("run_steps' example gives\n %v\nwant\n %v", got, want)
	}

	// An unknown name lists the templates; no name lists them all.
	_, errs, code = cli(t, "", "templates", "batch_extract", "--db", db)
	if code != 1 || !strings.Contains(errs, `no template "batch_extract": the templates are batch_extract_pages, `) {
		t.Fatalf("unknown template: exit %d %q", code, errs)
	}
	out, _, _ = cli(t, "", "templates", "--db", db)
	if !strings.Contains(out, "\nbrowsertask templates NAME describes a template's inputs.\n") {
		t.Fatalf("templates:\n%s", out)
	}
}

// templateInfo opens the database's engine and returns one template.
func templateInfo(t *testing.T, db, id string) engine.TemplateInfo {
	t.Helper()
	cfg, err := parseFlags("templates", []string{"--db", db}, func(string) string { return "" }, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(t.Context(), cfg, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	for _, tpl := range a.engine.Templates() {
		if tpl.TemplateID == id {
			return tpl
		}
	}
	t.Fatalf("no template %s", id)
	return engine.TemplateInfo{}
}
