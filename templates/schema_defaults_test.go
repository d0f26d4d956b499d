package templates

import (
	"encoding/json"
	"testing"
)

// TestSchemaDefaultsAreTheOnesApplied: every "default" an input schema
// states for a page-load input, a crawl limit or a login wait is the
// value the template applies when the input is left out. The schemas are
// written from the same Go constants; this test fails if a number is
// typed into schema text again and drifts.
func TestSchemaDefaultsAreTheOnesApplied(t *testing.T) {
	var load pageLoad
	load.applyDefaults()
	var scope crawlScope
	scope.applyDefaults()
	steps, err := parseStepsInputs(json.RawMessage(`{"steps":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	login, err := parseLoginInputs(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]any{
		"concurrency": load.Concurrency, "perPageTimeoutMs": load.PerPageTimeoutMs, "waitFor": load.WaitFor,
		"maxPages": scope.MaxPages, "maxDepth": *scope.MaxDepth, "sameOrigin": *scope.SameOrigin,
		"navigationTimeoutMs": steps.NavigationTimeoutMs,
	}
	loginApplied := map[string]any{"timeoutMs": login.TimeoutMs, "successTimeoutMs": login.SuccessTimeoutMs, "perPageTimeoutMs": login.PerPageTimeoutMs}
	checked := 0
	for name, schema := range map[string]string{
		"batch_extract_pages": batchInputSchema(), "crawl_site": crawlInputSchema(), "extract_structured": structuredInputSchema(),
		"screenshot_pages": shotInputSchema(), "save_pdf": pdfInputSchema(), "run_steps": runStepsInputSchema(), "login": loginInputSchema(),
	} {
		var doc struct {
			Properties map[string]struct {
				Default json.RawMessage `json:"default"`
			} `json:"properties"`
		}
		if err := json.Unmarshal([]byte(schema), &doc); err != nil {
			t.Fatalf("%s: input schema is not JSON: %v", name, err)
		}
		want := applied
		if name == "login" {
			want = loginApplied
		}
		for prop, v := range want {
			p, ok := doc.Properties[prop]
			if !ok {
				continue
			}
			b, _ := json.Marshal(v)
			if string(p.Default) != string(b) {
				t.Errorf("%s: inputs.%s default %s in the schema, %s applied", name, prop, p.Default, b)
			}
			checked++
		}
	}
	// 5 templates × 3 page-load inputs, 2 × 5 crawl limits (3 with a
	// default), run_steps' navigationTimeoutMs, login's 3 waits.
	if checked != 5*3+2*3+1+3 {
		t.Fatalf("%d defaults checked, want %d: a schema lost a property this test knows", checked, 5*3+2*3+1+3)
	}
}
