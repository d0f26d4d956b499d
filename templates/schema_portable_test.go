package templates

import (
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// Every template's inputSchema and resultSchema, as list_task_templates
// shows them, is portable: no type arrays, no subschema that accepts
// anything (engine.PortabilityFindings, the MCP Inspector's rules).
func TestTemplateSchemasArePortable(t *testing.T) {
	all := All(nil, nil)
	if len(all) != 10 {
		t.Fatalf("%d templates, want 10", len(all))
	}
	for _, tpl := range all {
		info := tpl.Info()
		for name, doc := range map[string]json.RawMessage{"inputSchema": info.InputSchema, "resultSchema": info.ResultSchema} {
			if len(doc) == 0 {
				t.Errorf("%s: no %s", info.TemplateID, name)
				continue
			}
			fs, err := engine.PortabilityFindings(doc)
			if err != nil {
				t.Fatalf("%s %s: %v", info.TemplateID, name, err)
			}
			for _, f := range fs {
				t.Errorf("%s %s: %s", info.TemplateID, name, f)
			}
			if _, err := engine.CompileSchema(doc); err != nil {
				t.Errorf("%s %s: %v", info.TemplateID, name, err)
			}
		}
	}
}

// A page's error in the page templates' results still admits exactly what
// it admitted as a type array: null or an error object, nothing else.
func TestPageErrorStaysNullableObject(t *testing.T) {
	for _, tc := range []struct {
		id, list string
	}{{"batch_extract_pages", "pages"}, {"screenshot_pages", "screenshots"}, {"save_pdf", "pdfs"}, {"crawl_site", "pages"}} {
		var info engine.TemplateInfo
		for _, tpl := range All(nil, nil) {
			if tpl.Info().TemplateID == tc.id {
				info = tpl.Info()
			}
		}
		if info.TemplateID == "" {
			t.Fatalf("no template %s", tc.id)
		}
		var doc struct {
			Properties map[string]struct {
				Items struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(info.ResultSchema, &doc); err != nil {
			t.Fatal(err)
		}
		errSchema, ok := doc.Properties[tc.list].Items.Properties["error"]
		if !ok {
			t.Fatalf("%s: resultSchema has no %s[].error", tc.id, tc.list)
		}
		es, err := engine.CompileSchema(errSchema)
		if err != nil {
			t.Fatal(err)
		}
		for value, wantOK := range map[string]bool{
			`null`: true,
			`{"errorCode": "NAVIGATION_TIMEOUT", "message": "m", "recovery": "r", "details": {"url": "u"}}`: true,
			`{}`:                  true,
			`"x"`:                 false,
			`1`:                   false,
			`[]`:                  false,
			`{"errorCode": 3}`:    false,
			`{"details": "text"}`: false,
		} {
			err := es.Validate(json.RawMessage(value), "error")
			if (err == nil) != wantOK {
				t.Errorf("%s: error = %s: accepted %v, want %v (%v)", tc.id, value, err == nil, wantOK, err)
			}
		}
	}
}
