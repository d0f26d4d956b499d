package acceptance

// Issue 4, acceptance 4, 6, 7, 8: run_steps, screenshot_pages, save_pdf,
// crawl_site, template versions and the URL policy, through MCP.

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// expectedCrawlPaths is the breadth-first visit order of the fixture's
// crawl site under the limits, with one page (and so its subtree) excluded.
func expectedCrawlPaths(maxPages, maxDepth, excluded int) []string {
	var out []string
	level, scheduled := []int{0}, 1
	for d := 0; len(level) > 0; d++ {
		var next []int
		for _, n := range level {
			out = append(out, fmt.Sprintf("/crawl/%d", n))
			for _, c := range fixture.CrawlChildren(n) {
				if d < maxDepth && c != excluded && scheduled < maxPages {
					next = append(next, c)
					scheduled++
				}
			}
		}
		level = next
	}
	return out
}

func TestBlackboxTemplates(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)

	t.Run("versions", func(t *testing.T) {
		seen := map[string]bool{}
		for _, raw := range callOK(t, cs, "list_task_templates", nil)["templates"].([]any) {
			tpl := raw.(obj)
			if v, _ := tpl["versions"].([]any); len(v) != 1 || v[0] != 1.0 || tpl["inputSchema"] == nil {
				t.Errorf("%v: versions %v", tpl["templateId"], tpl["versions"])
			}
			seen[tpl["templateId"].(string)] = true
		}
		for _, id := range []string{"batch_extract_pages", "screenshot_pages", "save_pdf", "crawl_site", "login", "run_steps"} {
			if !seen[id] {
				t.Errorf("template %s not listed", id)
			}
		}
		args := obj{"templateId": "batch_extract_pages@7", "inputs": obj{"urls": []any{fx.URL("/page/1")}}}
		if code, msg := callErr(t, cs, "run_task_template", args); code != "TEMPLATE_VERSION_UNSUPPORTED" || !strings.Contains(msg, "[1]") {
			t.Fatalf("@7: %s %s", code, msg)
		}
		res := runOK(t, cs, "batch_extract_pages@1", "", obj{"urls": []any{fx.URL("/page/1")}})
		if num(sub(res, "summary"), "succeeded") != 1 {
			t.Fatalf("@1: %v", res)
		}
	})

	t.Run("screenshot_pages_and_save_pdf", func(t *testing.T) {
		res := runOK(t, cs, "screenshot_pages", "", obj{"urls": []any{fx.URL("/page/1")}, "viewport": obj{"width": 640, "height": 480}})
		shot := res["screenshots"].([]any)[0].(obj)
		png, mime, _ := readArtifact(t, cs, shot["artifactId"].(string), 0, 262144)
		cfg, format, err := image.DecodeConfig(bytes.NewReader(png))
		if mime != "image/png" || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || err != nil || format != "png" || cfg.Width != 640 || cfg.Height != 480 {
			t.Fatalf("PNG: %s %s %dx%d %v", mime, format, cfg.Width, cfg.Height, err)
		}
		res = runOK(t, cs, "screenshot_pages", "", obj{"urls": []any{fx.URL("/page/2")}, "format": "jpeg", "quality": 70})
		jpg, mime, _ := readArtifact(t, cs, res["screenshots"].([]any)[0].(obj)["artifactId"].(string), 0, 262144)
		cfg, format, err = image.DecodeConfig(bytes.NewReader(jpg))
		if mime != "image/jpeg" || !bytes.HasPrefix(jpg, []byte{0xFF, 0xD8, 0xFF}) || err != nil || format != "jpeg" || cfg.Width != 1280 || cfg.Height != 800 {
			t.Fatalf("JPEG: %s %s %dx%d %v", mime, format, cfg.Width, cfg.Height, err)
		}
		res = runOK(t, cs, "save_pdf", "", obj{"urls": []any{fx.URL("/page/3")}, "paper": "a4"})
		pdf, mime, _ := readArtifact(t, cs, res["pdfs"].([]any)[0].(obj)["artifactId"].(string), 0, 262144)
		if mime != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-32:], []byte("%%EOF")) {
			t.Fatalf("PDF: %s %d bytes %q", mime, len(pdf), pdf[:min(8, len(pdf))])
		}
	})

	t.Run("crawl_site", func(t *testing.T) {
		res := runOK(t, cs, "crawl_site", "", obj{"startUrl": fx.URL("/crawl/0"), "maxPages": 50, "maxDepth": 3,
			"exclude": []any{"*/crawl/5"}, "fields": obj{"h": "h1"}})
		// Breadth first: the pages come by depth; within a depth, tabs
		// finishing in another order may list them in another order.
		var got []string
		lastDepth := 0
		for _, raw := range res["pages"].([]any) {
			pg := raw.(obj)
			got = append(got, strings.TrimPrefix(pg["url"].(string), fx.Base()))
			if d := int(num(pg, "depth")); d < lastDepth {
				t.Errorf("page %s at depth %d listed after a page at depth %d", pg["url"], d, lastDepth)
			} else {
				lastDepth = d
			}
		}
		want := expectedCrawlPaths(50, 3, 5)
		sortedGot := slices.Sorted(slices.Values(got))
		if !reflect.DeepEqual(sortedGot, slices.Sorted(slices.Values(want))) || got[0] != "/crawl/0" {
			t.Fatalf("crawl visited %d pages %v\nwant %d %v", len(got), got, len(want), want)
		}
		res = runOK(t, cs, "crawl_site", "", obj{"startUrl": fx.URL("/crawl/0"), "maxPages": 50})
		if n := len(res["pages"].([]any)); n != 50 || fx.Hits("/crawl/50") != 0 {
			t.Fatalf("maxPages 50 visited %d pages (/crawl/50 fetched %d times)", n, fx.Hits("/crawl/50"))
		}
	})

	t.Run("run_steps", func(t *testing.T) {
		res := runOK(t, cs, "run_steps", "", obj{"startUrl": fx.URL("/form"), "steps": []any{
			obj{"action": "type", "selector": "#q", "text": "agent"},
			obj{"action": "select", "selector": "#color", "value": "green"},
			obj{"action": "click", "selector": "#go"},
			obj{"action": "wait_for", "selector": "#late"},
			obj{"action": "wait_for", "text": "Hello agent"},
			obj{"action": "extract", "name": "result", "selector": "#result"},
			obj{"action": "screenshot", "name": "shot"},
		}})
		if v := sub(res, "values"); v["result"] != "Hello agent (green)" {
			t.Fatalf("values: %v", v)
		}
		art := res["artifacts"].([]any)[0].(obj)
		png, mime, _ := readArtifact(t, cs, art["artifactId"].(string), 0, 262144)
		if _, format, err := image.DecodeConfig(bytes.NewReader(png)); mime != "image/png" || format != "png" || err != nil || num(art, "stepIndex") != 6 {
			t.Fatalf("screenshot artifact: %s %s %v %v", mime, format, err, art)
		}
		e := runFails(t, cs, "run_steps", "", obj{"startUrl": fx.URL("/form"), "steps": []any{
			obj{"action": "click", "selector": "#go"}, obj{"action": "click", "selector": "#missing", "timeoutMs": 300}}}, "ELEMENT_NOT_FOUND")
		if d := sub(e, "details"); num(d, "stepIndex") != 1 || d["action"] != "click" {
			t.Fatalf("ELEMENT_NOT_FOUND details: %v", e)
		}
		e = runFails(t, cs, "run_steps", "", obj{"startUrl": fx.URL("/hang"), "navigationTimeoutMs": 1000,
			"steps": []any{obj{"action": "click", "selector": "#x"}}}, "NAVIGATION_TIMEOUT")
		if d := sub(e, "details"); num(d, "stepIndex") != -1 || d["action"] != "navigate" {
			t.Fatalf("NAVIGATION_TIMEOUT details: %v", e)
		}
	})

	t.Run("url_policy", func(t *testing.T) {
		before := countRuns(t, cs, nil)
		for _, u := range []string{"javascript:alert(1)", "data:text/html,<h1>x</h1>", "chrome://version", "file:///etc/passwd",
			"view-source:" + fx.URL("/page/1"), "http://" + p.addr + "/mcp"} {
			for _, tc := range []obj{
				{"templateId": "batch_extract_pages", "inputs": obj{"urls": []any{u}}},
				{"templateId": "run_steps", "inputs": obj{"steps": []any{obj{"action": "navigate", "url": u}}}},
			} {
				if code, msg := callErr(t, cs, "run_task_template", tc); code != "INVALID_PARAMETER" {
					t.Errorf("%s via %s: want INVALID_PARAMETER, got %s %s", u, tc["templateId"], code, msg)
				}
			}
		}
		if after := countRuns(t, cs, nil); after != before {
			t.Fatalf("rejected URLs created %d runs", after-before)
		}
		// Pages that redirect to or frame the daemon's own address fail,
		// and the browser never reaches it.
		daemon := "http://" + p.addr + "/healthz"
		e := runFails(t, cs, "batch_extract_pages", "", obj{"urls": []any{fx.URL("/redirect?to=" + daemon), fx.URL("/frame?src=" + daemon)}}, "STEP_EXECUTION_FAILED")
		for _, raw := range sub(e, "details")["errors"].([]any) {
			if pe := raw.(obj); !strings.Contains(pe["message"].(string), "URL policy") {
				t.Errorf("page error: %v", pe)
			}
		}
		if !p.logLine("request blocked by the URL policy", p.addr) {
			t.Fatal("no blocked request to the daemon's address in the log")
		}
	})
}

func TestBlackboxRestricted(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	cs := connectHTTP(t, startServe(t, "--trust", "restricted"), nil)
	if prof := callOK(t, cs, "get_runtime_profile", nil); prof["trustLevel"] != "restricted" {
		t.Fatalf("profile trustLevel %v", prof["trustLevel"])
	}
	// The second line are ranges bfdb840 accepted (issue 26 item 7): carrier-grade
	// NAT, benchmarking, multicast, IPv4-compatible, NAT64, 6to4 and Teredo
	// forms carrying loopback.
	for _, u := range []string{fx.URL("/page/1"), "http://localhost:9/", "http://[::1]:9/", "http://10.1.2.3/", "http://169.254.169.254/latest",
		"http://100.64.0.1/", "http://198.18.0.1/", "http://224.0.0.1/", "http://[::127.0.0.1]:9/", "http://[64:ff9b::7f00:1]:9/",
		"http://[2002:7f00:1::1]/", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"} {
		if code, msg := callErr(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "inputs": obj{"urls": []any{u}}}); code != "TRUST_LEVEL_NOT_ALLOWED" {
			t.Errorf("%s under restricted: %s %s", u, code, msg)
		}
	}
	code, _ := callErr(t, cs, "run_task_template", obj{"templateId": "run_steps", "inputs": obj{"steps": []any{
		obj{"action": "scroll", "to": "top"}, obj{"action": "evaluate", "script": "document.title"}}}})
	if code != "TRUST_LEVEL_NOT_ALLOWED" {
		t.Fatalf("evaluate under restricted: %s", code)
	}
	if n := countRuns(t, cs, nil); n != 0 {
		t.Fatalf("refused submissions created %d runs", n)
	}
}
