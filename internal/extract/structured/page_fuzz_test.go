package structured

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// fuzzSchemas are the schemas FuzzParsePage extracts with: the acceptance
// schema (every source may fill it) and the hinted one (selectors first).
func fuzzSchemas(tb testing.TB) []*Schema {
	var out []*Schema
	for _, doc := range []string{productSchema, hintedSchema} {
		s, err := Compile(json.RawMessage(doc), "options.outputSchema")
		if err != nil {
			tb.Fatalf("compile seed schema: %v", err)
		}
		out = append(out, s)
	}
	return out
}

// FuzzParsePage parses any page (JSON-LD, microdata, RDFa Lite, meta tags,
// hints) and extracts the product schemas, as extract_structured does with
// a fetched page or a browser's serialized DOM. Invariants: parsing and
// extraction never fail; a path listed missing is not filled; every filled
// leaf already has the shape CoerceValue gives it (coercion is
// idempotent), so the model step's re-coercion does not change found
// values; Problems are exactly Validate's verdict on Object; the result
// and Text are deterministic; Text has no empty or untrimmed lines and is
// UTF-8 when the page is.
func FuzzParsePage(f *testing.F) {
	for _, p := range fuzzseed.Pages(f) {
		f.Add(string(p.Body), p.URL)
	}
	for _, s := range []string{
		// itemref cycles, an item that is its own property, RDFa nested in microdata
		`<div itemscope itemtype="https://schema.org/Product" id="a" itemref="b a"><span itemprop="name">N</span></div>` +
			`<div id="b" itemprop="offers" itemscope itemref="a"><meta itemprop="price" content="1,5"></div>`,
		`<div vocab="https://schema.org/" typeof="Product"><span property="name">R</span>` +
			`<div property="offers" typeof="Offer"><span property="price" content="2">two</span>` +
			`<div itemscope itemprop="x" itemref="r" id="r"></div></div></div>`,
		`<base href="//cdn.example/"><meta property="og:image" content="img.png"><link rel=canonical href="../c?d#e">` +
			`<meta property="product:price:amount" content="3.00"><meta property="product:price:currency" content="eur">`,
		strings.Repeat("<div itemscope>", 520) + `<span itemprop="name">deep</span>`,
	} {
		f.Add(s, "https://shop.example/p/1")
	}
	schemas := fuzzSchemas(f)
	f.Fuzz(func(t *testing.T, src, finalURL string) {
		page := fuzzPage(t, src, finalURL)
		for _, s := range schemas {
			r := s.Extract(page)
			checkExtraction(t, s, r)
			j1, _ := json.Marshal(r)
			j2, err := json.Marshal(s.Extract(fuzzPage(t, src, finalURL)))
			if err != nil {
				t.Fatalf("result does not encode: %v", err)
			}
			if string(j1) != string(j2) {
				t.Fatalf("extraction not deterministic:\n%s\n%s", j1, j2)
			}
		}
		text := page.Text()
		if text != fuzzPage(t, src, finalURL).Text() {
			t.Fatal("Text not deterministic")
		}
		for i, line := range strings.Split(text, "\n") {
			if text != "" && (line == "" || line != strings.TrimSpace(line)) {
				t.Fatalf("Text line %d is empty or untrimmed: %q", i, line)
			}
		}
		if utf8.ValidString(src) && utf8.ValidString(finalURL) && !utf8.ValidString(text) {
			t.Fatalf("Text of a UTF-8 page is not UTF-8: %q", text)
		}
	})
}

// checkExtraction asserts the invariants of one Extract result.
func checkExtraction(t *testing.T, s *Schema, r *Result) {
	t.Helper()
	if r.Object == nil || r.Sources == nil {
		t.Fatalf("nil object or sources: %+v", r)
	}
	for _, m := range r.Missing {
		if v, ok := valueAt(r.Object, m); ok {
			t.Fatalf("%s listed missing but filled with %v", m, v)
		}
	}
	for _, path := range s.Properties() {
		v, ok := valueAt(r.Object, path)
		if !ok {
			continue
		}
		again, err := s.CoerceValue(path, v)
		if err != nil {
			t.Fatalf("%s = %#v was filled but CoerceValue refuses it: %v", path, v, err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("%s = %#v changes when coerced again: %#v", path, v, again)
		}
	}
	// A hint's error (the element's text holds several values) is a
	// problem of its own: that property is neither filled nor listed
	// missing, and Problems is the errors then Validate's messages.
	for path, msg := range r.Errors {
		if v, ok := valueAt(r.Object, path); ok {
			t.Fatalf("%s has an error (%s) but was filled with %v", path, msg, v)
		}
		if slices.Contains(r.Missing, path) {
			t.Fatalf("%s has an error (%s) but is listed missing", path, msg)
		}
		if !slices.Contains(r.Problems, msg) {
			t.Fatalf("error of %s is not among the problems %v", path, r.Problems)
		}
	}
	if want := s.Problems(r.Object, r.Errors); !reflect.DeepEqual(want, r.Problems) {
		t.Fatalf("Problems %v, Schema.Problems says %v", r.Problems, want)
	}
	if len(r.Errors) == 0 {
		if want := s.Validate(r.Object); !reflect.DeepEqual(want, r.Problems) {
			t.Fatalf("Problems %v, Validate says %v", r.Problems, want)
		}
	}
}

// valueAt follows a dot path through nested objects.
func valueAt(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// FuzzJSONLD reads any text as a page's JSON-LD block (the most
// structured thing a page hands the extractor: nesting, @graph, @id
// references, escapes) and extracts the product schema from it. A block
// that is not JSON leaves a note instead of failing.
func FuzzJSONLD(f *testing.F) {
	for _, s := range []string{
		`{"@context":"https://schema.org","@type":"Product","name":"A","offers":{"@type":"Offer","price":"12.50","priceCurrency":"EUR"}}`,
		`{"@graph":[{"@id":"#o","@type":"Offer","price":3},{"@type":"Product","name":"B","offers":{"@id":"#o"}}]}`,
		`[{"@type":["Thing","Product"],"name":{"@value":"C"},"aggregateRating":{"ratingValue":"4,5"}}]`,
		`{"@type":"Product","name":"\u003cb\u003eD\u003c/b\u003e","offers":[{"price":"1.234,56 €"}]}`,
		`{"@id":"#a","@type":"Product","isRelatedTo":{"@id":"#a"}}`, `not json`, `{"a":`, `<!--{"@type":"Product"}-->`,
	} {
		f.Add(s)
	}
	matches, _ := filepath.Glob("testdata/*.html")
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		for _, part := range strings.Split(string(b), `<script type="application/ld+json">`)[1:] {
			block, _, _ := strings.Cut(part, "</script>")
			f.Add(block)
		}
	}
	schemas := fuzzSchemas(f)
	f.Fuzz(func(t *testing.T, block string) {
		src := `<html><head><title>t</title><script type="application/ld+json">` + block + `</script></head><body></body></html>`
		page := fuzzPage(t, src, "https://shop.example/p/1")
		for _, s := range schemas {
			checkExtraction(t, s, s.Extract(page))
		}
	})
}

// FuzzCompileSchema compiles any document as an output schema (it comes
// from the client: options.outputSchema) and, when it compiles, extracts
// with it from the fixture pages and restricts it to what is missing, as
// the model step does. Errors name the field and are the same for the
// same document; a restricted schema compiles again.
func FuzzCompileSchema(f *testing.F) {
	f.Add([]byte(productSchema))
	f.Add([]byte(hintedSchema))
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"array","items":{"type":"integer"}}}}`,
		`{"type":"object","x-type":"Product","properties":{"offers":{"type":"object","properties":{"price":{"type":"number","x-selector":"[","x-attr":"content"}}}}}`,
		`{"type":"object","properties":{"r":{"$ref":"#"}}}`, `{"$ref":"http://remote.example/s.json"}`,
		`{"type":["object","null"],"properties":{"d":{"type":"string","format":"date"}}}`, `[]`, `true`, `{}`,
	} {
		f.Add([]byte(s))
	}
	var pages []*Page
	matches, _ := filepath.Glob("testdata/*.html")
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			if p, err := ParsePage(string(b), "https://shop.example/p/1"); err == nil {
				pages = append(pages, p)
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := Compile(json.RawMessage(doc), "options.outputSchema")
		if _, again := Compile(json.RawMessage(doc), "options.outputSchema"); (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("Compile not deterministic: %v then %v", err, again)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "options.outputSchema") {
				t.Fatalf("error does not name the field: %v", err)
			}
			return
		}
		for _, p := range pages {
			r := s.Extract(p)
			checkExtraction(t, s, r)
			if len(r.Missing) == 0 || strings.Contains(strings.Join(r.Missing, "\n"), "%") {
				// KNOWN, left to report: santhosh-tekuri/jsonschema v6.0.3
				// puts property names into schema locations without
				// percent-encoding them, so a "%" in a name nested under
				// another property fails to compile ("invalid URL escape")
				// or resolves wrongly ("%25"); the restricted schema puts
				// the missing property one level deeper, where the root's
				// compiled.
				continue
			}
			restricted, err := json.Marshal(s.Restrict(r.Missing))
			if err != nil {
				t.Fatalf("restricted schema does not encode: %v", err)
			}
			if _, err := Compile(restricted, "restricted"); err != nil {
				t.Fatalf("the schema restricted to %v does not compile: %v\n%s", r.Missing, err, restricted)
			}
		}
	})
}

// fuzzPage is ParsePage for a fuzz input: markup nested deeper than the
// parser reads is the one refusal (an *page.DepthError with a nil
// Page), and the input is skipped; any other error fails.
func fuzzPage(t *testing.T, src, finalURL string) *Page {
	t.Helper()
	p, err := ParsePage(src, finalURL)
	if err != nil {
		var de *page.DepthError
		if !errors.As(err, &de) || p != nil {
			t.Fatalf("ParsePage: %v (page %v), want only a DepthError with a nil page", err, p)
		}
		t.Skip("nested deeper than the parser reads")
	}
	return p
}
