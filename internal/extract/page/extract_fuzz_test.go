package page

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// fuzzSelectors are selector seeds: the forms pages are scraped with.
var fuzzSelectors = []string{
	"h1", "title", "a[href]", "div", "p:nth-child(2)", "#x", ".c > b ~ i", ":not(p)",
	`[data-x^="a"]`, "*", `meta[name="description"]`, "ul li:last-child", "table td + td",
	"a:contains(x)", "h1, h2 , .price", "svg a", "template p", "noscript p", "[hidden]",
}

// fuzzAttrs are attr seeds: text, innerHTML, the reflected URLs and a plain
// attribute.
var fuzzAttrs = []string{"", "text", "html", "href", "src", "content", "data-n"}

// FuzzExtract parses any markup and extracts a field, the text, the links
// and the meta tags, as render "http" and the browser path's serialized
// DOM (extract_structured) do, and checks what the callers rely on: one
// parse of any markup gives a document, the caps hold (text in UTF-16
// units, number of links, link text, meta keys), values have the
// documented types, output from UTF-8 input is UTF-8, the result encodes
// as JSON, and extraction is deterministic.
func FuzzExtract(f *testing.F) {
	for i, p := range fuzzseed.Pages(f) {
		f.Add(string(p.Body), p.URL, fuzzSelectors[i%len(fuzzSelectors)], fuzzAttrs[i%len(fuzzAttrs)], i%2 == 0, uint16(200+i*37), uint8(i*7))
	}
	f.Add(page, "https://example.com/a/b", "li.i", "data-n", true, uint16(5), uint8(2))
	f.Add(strings.Repeat("<div>", 600)+"x", "http://127.0.0.1/", "div", "", true, uint16(10), uint8(1))
	f.Fuzz(func(t *testing.T, body, pageURL, selector, attrName string, all bool, maxText uint16, maxLinks uint8) {
		var de *DepthError
		if _, err := Parse(strings.NewReader(body), pageURL); err != nil && !errors.As(err, &de) {
			t.Fatalf("Parse: %v (a recovered parser panic, not a read error)", err)
		}
		doc, err := ParseString(body, pageURL)
		if err != nil {
			// The one refusal: nesting deeper than MaxDepth, a *DepthError
			// with a nil document (issue 26 item 1: it was a nil document
			// without an error, and callers dereferenced it).
			if !errors.As(err, &de) || doc != nil {
				t.Fatalf("ParseString: %v (document %v), want only a DepthError with a nil document", err, doc)
			}
			t.Skip("nested deeper than the parser reads")
		}
		o := Options{
			Fields:   map[string]Field{"f": {Selector: selector, Attr: attrName, All: all}},
			Text:     true,
			Links:    true,
			Meta:     true,
			MaxText:  int(maxText),
			MaxLinks: int(maxLinks),
		}
		ex := NewExtractor(o)
		r := ex.Extract(doc)
		checkResult(t, r, o, utf8.ValidString(body) && utf8.ValidString(selector) && utf8.ValidString(pageURL))
		if reason := doc.AppShell(r); reason != "" && reason != ShellNoFields && reason != ShellNoscript && reason != ShellNoText {
			t.Fatalf("AppShell returned %q, not one of its reasons", reason)
		}
		doc2, _ := ParseString(body, pageURL)
		again := ex.Extract(doc2)
		j1, err1 := json.Marshal(r)
		j2, err2 := json.Marshal(again)
		if err1 != nil || err2 != nil {
			t.Fatalf("result does not encode as JSON: %v / %v", err1, err2)
		}
		if string(j1) != string(j2) {
			t.Fatalf("extraction is not deterministic:\n%s\n%s", j1, j2)
		}
	})
}

// checkResult asserts the invariants of one extraction result.
func checkResult(t *testing.T, r *Result, o Options, utf8In bool) {
	t.Helper()
	if r.Text == nil {
		t.Fatal("text asked for but nil")
	}
	if n := utf16Len(*r.Text); n > o.MaxText {
		t.Fatalf("text has %d UTF-16 units, over MaxText %d", n, o.MaxText)
	}
	if len(r.Links) > o.MaxLinks {
		t.Fatalf("%d links, over MaxLinks %d", len(r.Links), o.MaxLinks)
	}
	hrefs := map[string]bool{}
	for _, l := range r.Links {
		if l.Href == "" || hrefs[l.Href] {
			t.Fatalf("link href empty or repeated: %q", l.Href)
		}
		hrefs[l.Href] = true
		if n := utf16Len(l.Text); n > maxLinkText {
			t.Fatalf("link text has %d UTF-16 units, over %d", n, maxLinkText)
		}
		if l.Text != clean(l.Text) {
			t.Fatalf("link text not whitespace-collapsed: %q", l.Text)
		}
	}
	if len(r.Meta) > maxMetaKeys+2 { // + canonical and lang
		t.Fatalf("%d meta keys, over %d", len(r.Meta), maxMetaKeys+2)
	}
	if r.Title != strings.Join(strings.FieldsFunc(r.Title, isASCIIWhitespace), " ") {
		t.Fatalf("title not whitespace-collapsed: %q", r.Title)
	}
	if len(r.FieldErrors) == 0 {
		v, ok := r.Fields["f"]
		if !ok {
			t.Fatalf("field f missing without a field error: %v", r.Fields)
		}
		checkValueType(t, v, o.Fields["f"].All)
	} else if _, ok := r.Fields["f"]; ok {
		t.Fatalf("field f both valued and in error: %v", r.FieldErrors)
	}
	if utf8In {
		checkUTF8(t, r)
	}
}

// checkValueType asserts a field value is nil or a string, or for all a
// list of those.
func checkValueType(t *testing.T, v any, all bool) {
	t.Helper()
	if all {
		list, ok := v.([]any)
		if !ok {
			t.Fatalf("all field is %T, want []any", v)
		}
		for _, e := range list {
			checkValueType(t, e, false)
		}
		return
	}
	if _, ok := v.(string); v != nil && !ok {
		t.Fatalf("field is %T, want string or nil", v)
	}
}

// checkUTF8 asserts every string of r is valid UTF-8.
func checkUTF8(t *testing.T, r *Result) {
	t.Helper()
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if !utf8.ValidString(v.String()) {
				t.Fatalf("invalid UTF-8 from UTF-8 input: %q", v.String())
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				visit(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					visit(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				visit(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				visit(it.Key())
				visit(it.Value())
			}
		}
	}
	visit(reflect.ValueOf(r))
}

// FuzzCompileSelector compiles any selector (inputs.fields reach it
// before a run starts, in checkHTTPFields) and runs what compiles on a
// page. A selector with a cascadia-only construct outside quotes is
// refused with a message naming it.
func FuzzCompileSelector(f *testing.F) {
	for _, s := range fuzzSelectors {
		f.Add(s)
	}
	for _, s := range []string{`a[title="x:contains(y)"]`, `p\:contains`, `[a!=b]`, `[a#=b]`, `:is(a,b)`, `a::before`, `:nth-child(2n+1 of p)`, `\`, `"`, `[`} {
		f.Add(s)
	}
	d, err := ParseString(page, "https://example.com/a/b")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sel string) {
		s, err := CompileSelector(sel)
		if (s == nil) == (err == nil) {
			t.Fatalf("CompileSelector(%q) = %v, %v: want exactly one", sel, s, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "selector") {
				t.Fatalf("error does not say it is about the selector: %v", err)
			}
			return
		}
		if ext := nonStandard(sel); ext != "" {
			t.Fatalf("%q compiled despite cascadia-only %s", sel, ext)
		}
		one := d.FieldValue(s, Field{Selector: sel})
		list := d.FieldValue(s, Field{Selector: sel, All: true}).([]any)
		if (one == nil) != (len(list) == 0) {
			// The first match of Query is the first of QueryAll.
			t.Fatalf("first match %v but %d matches in all", one, len(list))
		}
		if one != nil && !reflect.DeepEqual(one, list[0]) {
			t.Fatalf("first match %q is not the first of all %q", one, list[0])
		}
	})
}
