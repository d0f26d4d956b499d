package web

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMaskInputsHidesSecrets(t *testing.T) {
	schema := json.RawMessage(`{"properties":{"pin":{"type":"string","writeOnly":true},
		"steps":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string","x-secret":true}}}}}}`)
	out := maskInputs(json.RawMessage(`{"url":"https://x","pin":"1234","password":"hunter2",
		"steps":[{"text":"typed secret","selector":"#a"}],"auth":{"apiKey":"k-123"}}`), schema)
	for _, leaked := range []string{"1234", "hunter2", "typed secret", "k-123"} {
		if strings.Contains(out, leaked) {
			t.Fatalf("secret %q shown:\n%s", leaked, out)
		}
	}
	if strings.Count(out, `"***"`) != 4 || !strings.Contains(out, "https://x") || !strings.Contains(out, "#a") {
		t.Fatalf("masked inputs:\n%s", out)
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"page.html":              "page.html",
		"../../etc/passwd":       "passwd.html",
		"r\u00e9sum\u00e9 \"x\"": "rsumx.html",
		"":                       "artifact.html",
	} {
		if got := safeName(in, "text/html"); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskInputsShowsURLsAsTheyAre(t *testing.T) {
	out := maskInputs(json.RawMessage(`{"urls":["https://shop.example/search?q=mug&page=2","https://shop.example/<b>"]}`), nil)
	if !strings.Contains(out, `"https://shop.example/search?q=mug&page=2"`) || !strings.Contains(out, `"https://shop.example/<b>"`) {
		t.Fatalf("inputs shown as\n%s\nwant & < > as they are (templ escapes the text)", out)
	}
}
