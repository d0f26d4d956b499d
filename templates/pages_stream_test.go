package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// TestPagesWriterMatchesMarshalIndent: pages.json written page by page has
// the bytes the whole list marshalled at once had (0, 1 and 3 pages).
func TestPagesWriterMatchesMarshalIndent(t *testing.T) {
	text := "t <&> é"
	all := []*pageOut{
		{URL: "http://a.test/", Fields: map[string]any{"x": []any{"1", nil}}, Text: &text},
		{URL: "http://b.test/", Fields: map[string]any{}, Error: engine.Errorf(engine.StepExecutionFailed, "boom")},
		{URL: "http://c.test/", Fields: map[string]any{}, Links: []page.Link{{Href: "http://c.test/x", Text: "x"}}, LinksTruncated: true},
	}
	for _, n := range []int{0, 1, 3} {
		var b bytes.Buffer
		pw := &pagesWriter{w: &b}
		for _, p := range all[:n] {
			if err := pw.add(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.close(); err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(all[:n], "", "  ")
		if b.String() != string(want) {
			t.Fatalf("%d pages:\n%s\nwant\n%s", n, b.String(), want)
		}
	}
}

// TestSlimOutputDropsTextAndLinks: what the pool keeps of a page for the
// run's result has no text, links or frontier record, and everything else.
func TestSlimOutputDropsTextAndLinks(t *testing.T) {
	text := strings.Repeat("t", 1000)
	cp := crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: "http://a.test/", Title: "A", Text: &text,
		Fields: map[string]any{"h": "x"}, Links: []page.Link{{Href: "http://a.test/1"}}, LinksTruncated: true}, Depth: 2},
		Frontier: &crawlRecord{Added: []string{"http://a.test/1"}}}
	raw, _ := json.Marshal(cp)
	var got map[string]any
	if err := json.Unmarshal(slimOutput(raw), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"text", "links", "frontier"} {
		if _, ok := got[k]; ok {
			t.Fatalf("slim output keeps %s", k)
		}
	}
	if got["url"] != "http://a.test/" || got["title"] != "A" || got["depth"] != float64(2) || got["linksTruncated"] != true {
		t.Fatalf("slim output %v", got)
	}
}

// TestResultFieldsBudget: the pool keeps the pages' fields for the result
// until they add up to maxResultBytes; later pages keep fields {} and
// fieldsOmitted, so the result is bounded whatever the number of pages.
func TestResultFieldsBudget(t *testing.T) {
	u := &urlPool{slim: true}
	big := strings.Repeat("v", 1<<20)
	kept, omitted := 0, 0
	for i := range 12 {
		raw, _ := json.Marshal(pageOut{URL: fmt.Sprintf("http://a.test/%d", i), Fields: map[string]any{"f": big}})
		var p pageOut
		if err := json.Unmarshal(u.kept(raw), &p); err != nil {
			t.Fatal(err)
		}
		switch {
		case p.FieldsOmitted && len(p.Fields) == 0:
			omitted++
		case !p.FieldsOmitted && p.Fields["f"] == big && omitted == 0:
			kept++
		default:
			t.Fatalf("page %d: omitted %v, %d fields", i, p.FieldsOmitted, len(p.Fields))
		}
	}
	if kept != 7 || omitted != 5 || u.keptBytes > maxResultBytes+1000 {
		t.Fatalf("kept %d, omitted %d, %d bytes", kept, omitted, u.keptBytes)
	}
}
