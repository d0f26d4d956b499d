package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// TestEmptyFieldNameRejected (issue 9, defect 12): a field needs a name —
// `fields: {"": "h1"}` used to pass and produce a nameless value.
func TestEmptyFieldNameRejected(t *testing.T) {
	m := browser.NewManager(browser.Options{TempDir: t.TempDir()})
	defer m.Close()
	p := engine.Profile{MaxURLs: 100, MaxTabsPerSession: 5, TrustLevel: "local"}
	for _, tpl := range []engine.Template{NewBatchExtractPages(m), NewCrawlSite(m)} {
		id := tpl.Info().TemplateID
		in := `{"urls":["https://a.example/"],"fields":{"":"h1"}}`
		if id == "crawl_site" {
			in = `{"startUrl":"https://a.example/","fields":{"":"h1"}}`
		}
		e := engine.AsError(tpl.Check(json.RawMessage(in), p))
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "inputs.fields" || !strings.HasPrefix(e.Message, "inputs.fields: a field name is empty") {
			t.Errorf("%s: Check = %v, want INVALID_PARAMETER naming inputs.fields", id, e)
		}
		ok := strings.Replace(in, `"":`, `"title":`, 1)
		if err := tpl.Check(json.RawMessage(ok), p); err != nil {
			t.Errorf("%s: a named field: %v", id, err)
		}
	}
}
