package templates

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

func TestBatchInfoAndSchema(t *testing.T) {
	tpl := NewBatchExtractPages(nil)
	info := tpl.Info()
	if info.TemplateID != "batch_extract_pages" || info.Version != 1 || len(info.Versions) != 1 ||
		info.TrustLevel != "any" || !info.Resumable || !info.NeedsBrowser || len(info.Examples) != 1 {
		t.Fatalf("info = %+v", info)
	}
	if _, err := engine.CompileSchema(info.ResultSchema); err != nil {
		t.Fatalf("result schema: %v", err)
	}
	s, err := engine.CompileSchema(info.InputSchema)
	if err != nil {
		t.Fatalf("input schema: %v", err)
	}
	if e := engine.AsError(s.Validate(info.Examples[0], "inputs")); e != nil {
		t.Fatalf("the example is invalid: %v", e)
	}
	bad := []struct{ inputs, field string }{
		{`{}`, "inputs"},
		{`{"urls": []}`, "inputs.urls"},
		{`{"urls": ["https://a.example"], "url": "typo"}`, "inputs"},
		{`{"urls": ["https://a.example"], "concurrency": 21}`, "inputs.concurrency"},
		{`{"urls": ["https://a.example"], "perPageTimeoutMs": 999}`, "inputs.perPageTimeoutMs"},
		{`{"urls": ["https://a.example"], "fields": {"x": {"selector": "h1", "bogus": 1}}}`, "inputs.fields.x"},
		{`{"urls": ["https://a.example"], "fields": {"x": 3}}`, "inputs.fields.x"},
		{`{"urls": ["https://a.example"], "waitFor": ""}`, "inputs.waitFor"},
	}
	for _, b := range bad {
		e := engine.AsError(s.Validate(json.RawMessage(b.inputs), "inputs"))
		if e == nil || e.Code != engine.InvalidParameter || !strings.HasPrefix(e.Details["field"].(string), b.field) {
			t.Errorf("Validate(%s) = %v, want INVALID_PARAMETER on %s", b.inputs, e, b.field)
		}
	}
	urls := make([]string, 1001)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://a.example/%d", i)
	}
	raw, _ := json.Marshal(map[string]any{"urls": urls})
	if e := engine.AsError(s.Validate(raw, "inputs")); e == nil {
		t.Error("1001 urls accepted by the schema")
	}
}

func TestBatchCheck(t *testing.T) {
	// The a…d.example hosts resolve to a public address: under trust
	// restricted a host that does not resolve is refused.
	public := func(string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil }
	m := browser.NewManager(browser.Options{TempDir: t.TempDir(), DenyHosts: []string{"127.0.0.1:8765"}, Resolve: public})
	defer m.Close()
	tpl := NewBatchExtractPages(m)
	local := engine.Profile{MaxURLs: 3, MaxTabsPerSession: 5, TrustLevel: "local"}
	restricted := local
	restricted.TrustLevel = "restricted"
	cases := []struct {
		inputs string
		p      engine.Profile
		code   engine.ErrorCode
		field  string
	}{
		{`{"urls": ["https://a.example/", "http://127.0.0.1:9/"]}`, local, "", ""},
		{`{"urls": ["https://a.example/", "https://b.example/", "https://c.example/", "javascript:alert(1)"]}`, engine.Profile{TrustLevel: "local"}, engine.InvalidParameter, "inputs.urls[3]"},
		{`{"urls": ["https://a.example/", "data:text/html,x"]}`, local, engine.InvalidParameter, "inputs.urls[1]"},
		{`{"urls": ["https://a.example/", "http://127.0.0.1:9/"]}`, restricted, engine.TrustLevelNotAllowed, "inputs.urls[1]"},
		{`{"urls": ["http://localhost:8765/mcp"]}`, local, engine.InvalidParameter, "inputs.urls[0]"},
		{`{"urls": ["https://a.example/", "https://b.example/", "https://c.example/", "https://d.example/"]}`, local, engine.InvalidParameter, "inputs.urls"},
		{`{"urls": ["https://a.example/"], "concurrency": 6}`, local, engine.InvalidParameter, "inputs.concurrency"},
		{`{"urls": ["https://a.example/"], "fields": {"x": " "}}`, local, engine.InvalidParameter, "inputs.fields.x"},
	}
	for _, c := range cases {
		err := tpl.Check(json.RawMessage(c.inputs), c.p)
		if c.code == "" {
			if err != nil {
				t.Errorf("Check(%s) = %v, want ok", c.inputs, err)
			}
			continue
		}
		e := engine.AsError(err)
		if e == nil || e.Code != c.code || e.Details["field"] != c.field || !strings.HasPrefix(e.Message, c.field) {
			t.Errorf("Check(%s) = %v (details %v), want %s on %s", c.inputs, err, e, c.code, c.field)
		}
	}
}

func TestAllRegistry(t *testing.T) {
	all := All(nil, nil)
	seen := map[string]bool{}
	for _, tpl := range all {
		id := tpl.Info().TemplateID
		if seen[id] {
			t.Fatalf("duplicate template %s", id)
		}
		seen[id] = true
	}
	if !seen["batch_extract_pages"] {
		t.Fatal("batch_extract_pages not registered")
	}
}
