package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestInlineResultCutsWholeItems(t *testing.T) {
	pages := make([]map[string]any, 1000)
	for i := range pages {
		pages[i] = map[string]any{"url": fmt.Sprintf("https://example.test/%d", i), "title": strings.Repeat("t", 50)}
	}
	full, _ := json.Marshal(map[string]any{"summary": map[string]int{"total": 1000}, "pages": pages, "artifactId": "art_1"})

	if out, cut := InlineResult(full, len(full)); cut || string(out) != string(full) {
		t.Fatalf("a result that fits is returned as it is (cut %v)", cut)
	}
	for _, budget := range []int{4096, 10000, 65536} {
		out, cut := InlineResult(full, budget)
		if !cut || len(out) > budget {
			t.Fatalf("budget %d: cut %v, %d bytes", budget, cut, len(out))
		}
		var r struct {
			Pages       []map[string]any `json:"pages"`
			Truncated   bool             `json:"truncated"`
			ItemsInline int              `json:"itemsInline"`
			ItemsTotal  int              `json:"itemsTotal"`
			ArtifactID  string           `json:"artifactId"`
			Summary     map[string]int   `json:"summary"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if !r.Truncated || r.ItemsTotal != 1000 || r.ItemsInline != len(r.Pages) || r.ItemsInline == 0 || r.ArtifactID != "art_1" || r.Summary["total"] != 1000 {
			t.Fatalf("budget %d: %+v", budget, r)
		}
		for i, p := range r.Pages {
			if p["url"] != fmt.Sprintf("https://example.test/%d", i) {
				t.Fatalf("budget %d: page %d is %v: not a prefix", budget, i, p["url"])
			}
		}
		// One more item would not have fit.
		one, _ := json.Marshal(pages[r.ItemsInline])
		if len(out)+len(one)+1 <= budget {
			t.Fatalf("budget %d: %d items in %d bytes, the next (%d bytes) would fit", budget, r.ItemsInline, len(out), len(one))
		}
	}
}

func TestInlineResultWithoutAList(t *testing.T) {
	big, _ := json.Marshal(map[string]any{"value": strings.Repeat("x", 10000), "artifactId": "art_2"})
	out, cut := InlineResult(big, 4096)
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil || !cut {
		t.Fatalf("%v %v", err, cut)
	}
	if r["truncated"] != true || r["resultBytes"] != float64(len(big)) || r["artifactId"] != "art_2" || r["itemsInline"] != float64(0) {
		t.Fatalf("got %v", r)
	}
	if out, cut := InlineResult(json.RawMessage(`"`+strings.Repeat("y", 5000)+`"`), 4096); !cut || string(out) != `{"itemsInline":0,"resultBytes":5002,"truncated":true}` {
		t.Fatalf("a string result: %s", out)
	}
}
