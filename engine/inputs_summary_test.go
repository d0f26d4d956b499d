package engine

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestInputsSummary(t *testing.T) {
	urls := make([]string, 150)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://shop.example/p/%d", i)
	}
	many, _ := json.Marshal(map[string]any{"urls": urls})
	for _, c := range []struct{ tpl, in, want string }{
		{"batch_extract_pages", string(many), "https://shop.example/p/0 and 149 more"},
		{"screenshot_pages", `{"urls":["https://user:pw@a.example/x"]}`, "https://a.example/x"},
		{"login", `{"url":"https://accounts.example/login","username":"alice","password":"***"}`, "log in at accounts.example"},
		{"run_steps", `{"steps":[{"action":"navigate","url":"https://a.example/"},{"action":"click","selector":"#b"}]}`, "2 steps from https://a.example/"},
		{"run_steps", `{"startUrl":"https://a.example/form","steps":[{"action":"click","selector":"#b"}]}`, "1 step from https://a.example/form"},
		{"crawl_site", `{"startUrl":"https://docs.example/","maxPages":200}`, "from https://docs.example/, up to 200 pages"},
		{"dev_echo", `{"items":5,"sleepMs":250,"content":"secret words","pin":1234}`, "items 5 · sleepMs 250"},
		{"dev_echo", `{}`, ""},
		{"dev_echo", `not json`, ""},
	} {
		if got := InputsSummary(c.tpl, json.RawMessage(c.in)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tpl, c.in, got, c.want)
		}
	}
}
