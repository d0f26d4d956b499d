package templates

import (
	"reflect"
	"testing"
)

// TestGroupKey: a group is the host and the path's first directory; the
// pages at the root are one group ("/search.html" is not "/library/").
func TestGroupKey(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:5000/library/json.html":  "http://127.0.0.1:5000/library/",
		"http://127.0.0.1:5000/library/":           "http://127.0.0.1:5000/library/",
		"http://127.0.0.1:5000/library/sub/x.html": "http://127.0.0.1:5000/library/",
		"http://127.0.0.1:5000/search.html?q=json": "http://127.0.0.1:5000/",
		"http://127.0.0.1:5000/":                   "http://127.0.0.1:5000/",
		"http://127.0.0.1:5000":                    "http://127.0.0.1:5000/",
		"https://Example.com/c-api/list.html#x":    "https://example.com:443/c-api/",
		"http://example.com//double/slash":         "http://example.com:80/",
		"http://example.com/caf%C3%A9/menu":        "http://example.com:80/caf%C3%A9/",
		"file:///usr/share/doc/python3/index.html": "",
		"/library/json.html":                       "",
	} {
		if got := groupKey(in); got != want {
			t.Errorf("groupKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSampleEvidence: differences are attributed to JavaScript (the
// browser shows what the HTML lacks) or to a text rule of ours (the
// browser shows part of the HTML's text), and only the former is js.
func TestSampleEvidence(t *testing.T) {
	a := &autoRender{}
	for _, c := range []struct {
		name         string
		http, browse pageOut
		js, textRule []string
	}{
		{"equal", pageOut{Title: "T", Fields: map[string]any{"h1": "A"}}, pageOut{Title: "T", Fields: map[string]any{"h1": "A"}}, nil, nil},
		{"pilcrow hidden by CSS", pageOut{Fields: map[string]any{"h1": "Python Setup and Usage¶", "h2s": []any{"1. Intro¶", "2. More¶"}}},
			pageOut{Fields: map[string]any{"h1": "Python Setup and Usage", "h2s": []string{"1. Intro", "2. More"}}}, nil, []string{"h1", "h2s"}},
		{"text-transform and whitespace", pageOut{Title: "a  b", Fields: map[string]any{"h": "Menu\n  Item"}},
			pageOut{Title: "a b", Fields: map[string]any{"h": "MENU ITEM"}}, nil, []string{"h", "title"}},
		{"script fills a placeholder", pageOut{Fields: map[string]any{"price": "…", "tags": []any{}}},
			pageOut{Fields: map[string]any{"price": "3.50", "tags": []any{"tag-a"}}}, []string{"fields differ (price, tags)"}, nil},
		{"only the browser has the element", pageOut{Title: "", Fields: map[string]any{"name": nil}},
			pageOut{Title: "Item 1", Fields: map[string]any{"name": "Item 1"}}, []string{"fields differ (name)", "title differs"}, nil},
		{"only the HTML has the element", pageOut{Fields: map[string]any{"name": "x"}}, pageOut{Fields: map[string]any{"name": nil}},
			[]string{"fields differ (name)"}, nil},
		{"mixed", pageOut{FinalURL: "http://h/a", Fields: map[string]any{"h1": "A¶", "p": "1"}},
			pageOut{FinalURL: "http://h/b", Fields: map[string]any{"h1": "A", "p": "2"}}, []string{"fields differ (p)", "final URL differs"}, []string{"h1"}},
	} {
		ev := a.evidence(&c.http, &c.browse)
		if !reflect.DeepEqual(ev.js, c.js) || !reflect.DeepEqual(ev.textRule, c.textRule) {
			t.Errorf("%s: js %q text rule %q, want %q and %q", c.name, ev.js, ev.textRule, c.js, c.textRule)
		}
	}
	ev := sampleEvidence{textRule: []string{"h1", "h2s"}}
	if got := ev.textRuleReason(); got != "sample: text differs by a text rule, not JavaScript (h1, h2s)" || !agreed(got) || switchesGroup(got) {
		t.Errorf("text rule reason %q", got)
	}
	g := &autoGroup{prefix: "/library/"}
	if got := groupReason(g, "http://127.0.0.1:1/library/json.html?x=1", "fields differ (h2s)"); got != "group /library/ needs JavaScript: /library/json.html?x=1: fields differ (h2s)" || !switchesGroup(got) || agreed(got) {
		t.Errorf("group reason %q", got)
	}
}
