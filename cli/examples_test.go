package cli

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// exampleSite answers every page the templates' examples name (their
// hosts example.com, example.org, shop.example and shop.example.com are
// rewritten to it): a home page, documentation to crawl, a login form
// taking the example's password, a search page, products with JSON-LD
// and a cart asking for nothing.
func exampleSite(t *testing.T) *httptest.Server {
	t.Helper()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Home", `<h1>Example</h1><a href="/docs/">Docs</a>`)
	})
	mux.HandleFunc("GET /docs/", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Docs "+r.URL.Path, `<h1>Docs</h1><a href="/docs/start">Start</a> <a href="/docs/archive/old">Old</a>`)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Sign in", `<form method="post" action="/login"><label for="u">Username</label><input id="u" name="u">
<label for="p">Password</label><input id="p" name="p" type="password"><button type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("u") != "alice" || r.FormValue("p") != "…" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "alice", Path: "/"})
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Dashboard", `<h1>Welcome alice</h1>`)
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		res := ""
		if q := r.URL.Query().Get("q"); q != "" {
			res = fmt.Sprintf(`<div class="result"><h2>%s 1</h2></div><div class="result"><h2>%[1]s 2</h2></div>`, html.EscapeString(q))
		}
		page(w, "Search", `<form action="/search"><input id="q" name="q"></form>`+res)
	})
	mux.HandleFunc("GET /p/{n}", func(w http.ResponseWriter, r *http.Request) {
		n := r.PathValue("n")
		page(w, "Product "+n, fmt.Sprintf(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Mug %s",
"offers":{"@type":"Offer","price":"12.%s0","priceCurrency":"EUR"}}</script><h1>Mug %[1]s</h1>`, n, n))
	})
	mux.HandleFunc("GET /catalog/", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Catalog", `<a href="/p/1">1</a> <a href="/p/2">2</a>`)
	})
	mux.HandleFunc("GET /cart", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Cart", `<input id="pin"><button id="place-order" onclick="document.getElementById('order').textContent='Order placed'">Order</button><p id="order"></p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// localURLs rewrites the example hosts in one command-line word to base.
func localURLs(word, base string) string {
	for _, host := range []string{"https://shop.example.com", "https://shop.example", "https://example.com", "https://example.org"} {
		word = strings.ReplaceAll(word, host+"/", base+"/")
	}
	return word
}

// TestCLITemplateExamplesRunAsPrinted runs the example command line
// `browsertask templates NAME` prints for every template, with only its
// example hosts pointed at a local site: each must succeed, so what a
// person copies from the description works (extract_structured with its
// --output-schema, login with --session new and --save-session).
func TestCLITemplateExamplesRunAsPrinted(t *testing.T) {
	fixture.NeedChromium(t)
	site := exampleSite(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "bt.db")
	out, errs, code := cli(t, "", "templates", "--db", db)
	if code != 0 {
		t.Fatalf("templates: exit %d %s", code, errs)
	}
	var names []string
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 && !strings.HasPrefix(line, "browsertask") {
			names = append(names, f[0])
		}
	}
	if len(names) != 10 {
		t.Fatalf("want the 10 templates, got %q", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			out, _, _ := cli(t, "", "templates", name, "--db", db)
			words := shellWords(t, exampleLine(t, out))
			if name == "profile_sign_in" {
				// Its example is `profiles new`, which waits for a person to
				// sign in (TestProfilesNewWaitsThroughTheEngine runs it).
				if got := strings.Join(words[:4], " "); got != "browsertask profiles new work" {
					t.Fatalf("profile_sign_in's example: %q, want browsertask profiles new work --open URL", words)
				}
				return
			}
			if name == "agent_task" {
				// Its example needs a model (--model-url or the client's
				// through sampling); TestAgentTask* run it with a scripted one.
				if got := strings.Join(words[:3], " "); got != "browsertask run agent_task" || !strings.Contains(strings.Join(words, " "), "--output-schema") {
					t.Fatalf("agent_task's example: %q, want browsertask run agent_task … --output-schema …", words)
				}
				return
			}
			args := []string{}
			for _, w := range words[1:] {
				w = localURLs(w, site.URL)
				// The example's file names land in the test's directory.
				if w == "session.json" {
					w = filepath.Join(dir, w)
				}
				args = append(args, w)
			}
			args = append(args, "--db", db, "--browser", "/usr/bin/chromium")
			stdout, stderr, code := cli(t, "", args...)
			r := runJSON(t, stdout)
			if code != 0 || r["status"] != "succeeded" {
				t.Fatalf("%s as printed: exit %d, status %v, error %v\nargs %q\nstderr:\n%s", name, code, r["status"], r["error"], args, stderr)
			}
			if name != "login" {
				return
			}
			// The login is kept: the saved state holds the site's cookie,
			// private to its owner.
			st, err := os.Stat(filepath.Join(dir, "session.json"))
			b, _ := os.ReadFile(filepath.Join(dir, "session.json"))
			if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(string(b), `"sid"`) {
				t.Fatalf("session.json: %v, mode %v, %s", err, st.Mode(), b)
			}
		})
	}
}
