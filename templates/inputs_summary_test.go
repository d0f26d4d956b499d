package templates

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestTemplatesSummarizeTheirInputs: every template says in one line what
// a run of it works on, the same lines the engine used to build from
// their keys, and never user info, usernames or other strings.
func TestTemplatesSummarizeTheirInputs(t *testing.T) {
	urls := make([]string, 150)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://shop.example/p/%d", i)
	}
	many, _ := json.Marshal(map[string]any{"urls": urls})
	byID := map[string]engine.Template{}
	for _, tpl := range All(nil, nil) {
		byID[tpl.Info().TemplateID] = tpl
	}
	covered := map[string]bool{}
	for _, c := range []struct{ tpl, in, want string }{
		{"batch_extract_pages", string(many), "https://shop.example/p/0 and 149 more"},
		{"batch_extract_pages", `{"urls":["https://a.example/"],"fields":{"t":{"selector":"h1"}}}`, "https://a.example/"},
		{"screenshot_pages", `{"urls":["https://user:pw@a.example/x"]}`, "https://a.example/x"},
		{"save_pdf", `{"urls":["https://a.example/1","https://a.example/2"],"paper":"a4"}`, "https://a.example/1 and 1 more"},
		{"login", `{"url":"https://accounts.example/login","username":"alice","password":"***"}`, "log in at accounts.example"},
		{"login", `{"url":"https://127.0.0.1:8443/login","username":"alice","password":"***"}`, "log in at 127.0.0.1:8443"},
		{"run_steps", `{"steps":[{"action":"navigate","url":"https://a.example/"},{"action":"click","selector":"#b"}]}`, "2 steps from https://a.example/"},
		{"run_steps", `{"startUrl":"https://a.example/form","steps":[{"action":"click","selector":"#b"}]}`, "1 step from https://a.example/form"},
		{"run_steps", `{"steps":[{"action":"type","selector":"#q","text":"hunter2"}]}`, "1 step"},
		{"crawl_site", `{"startUrl":"https://docs.example/","maxPages":200}`, "from https://docs.example/, up to 200 pages"},
		{"crawl_site", `{"startUrl":"https://u:p@docs.example/"}`, "from https://docs.example/"},
		{"map_site", `{"startUrl":"https://u:p@docs.example/","maxPages":5000}`, "map of https://docs.example/, up to 5000 URLs"},
		{"extract_structured", `{"urls":["https://shop.example/p/1","https://shop.example/p/2"],"instruction":"prices"}`, "https://shop.example/p/1 and 1 more"},
		{"extract_structured", `{"startUrl":"https://shop.example/catalog/","maxPages":20}`, "from https://shop.example/catalog/, up to 20 pages"},
		{"extract_structured", `not json`, ""},
		{"profile_sign_in", `{"url":"https://accounts.example/login"}`, "sign in at accounts.example"},
		{"agent_task", `{"goal":"buy the mug for alice","startUrl":"https://u:p@shop.example/cart"}`, "task at shop.example"},
	} {
		s, ok := byID[c.tpl].(engine.InputsSummarizer)
		if !ok {
			t.Fatalf("%s does not implement engine.InputsSummarizer", c.tpl)
		}
		covered[c.tpl] = true
		if got := s.InputsSummary(json.RawMessage(c.in)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tpl, c.in, got, c.want)
		}
	}
	if len(covered) != len(byID) {
		t.Errorf("summaries tested for %d of %d templates", len(covered), len(byID))
	}
}
