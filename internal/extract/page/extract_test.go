package page

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// These tests pin the semantics without a browser; the values were
// checked against Chromium by templates' TestHTTPExtractionEqualsBrowser,
// which compares whole fixture pages.

const page = `<!doctype html><html lang="de"><head><title>  A
  title </title><base href="/docs/">
<meta name="description" content="D &amp; more"><meta property="og:title" content="OG"><meta name="" http-equiv="refresh" content="5">
<link rel="CANONICAL" href="canon.html"></head>
<body>
<h1 id="h">Hello <b>big</b>&nbsp;world</h1>
<ul><li class="i" data-n="1">one</li><li class="i">two</li></ul>
<a id="a" href="x.html?q=a b">X</a><a href="x.html?q=a b">dup</a><a href="#f"><img alt="img"></a>
<img id="img" src="pic.png"><div id="d" href="raw.html">d</div>
<div id="html"><b title="t" class="c">b</b> &lt;&amp;&gt;&nbsp;<br><script>1<2</script><!--c--></div>
<template><p class="t">in template</p></template>
<noscript><p class="ns">enable JavaScript</p></noscript>
<div hidden id="hid">hidden <span>text</span></div>
<svg><a href="/svg"><text>svg link</text></a></svg>
</body></html>`

func TestFields(t *testing.T) {
	r := extracted(t, page, "http://example.com/start/page.html#top", Options{Fields: map[string]Field{
		"h":        {Selector: "#h"},
		"items":    {Selector: ".i", All: true},
		"ns":       {Selector: ".i", Attr: "data-n", All: true},
		"href":     {Selector: "#a", Attr: "href"},
		"src":      {Selector: "#img", Attr: "src"},
		"raw":      {Selector: "#d", Attr: "href"},
		"html":     {Selector: "#html", Attr: "html"},
		"tpl":      {Selector: ".t"},
		"tplAll":   {Selector: "template p", All: true},
		"noscript": {Selector: ".ns"},
		"hidden":   {Selector: "#hid"},
		"missing":  {Selector: "#none"},
		"none":     {Selector: "#none", All: true},
		"absent":   {Selector: "#h", Attr: "title"},
		"upper":    {Selector: "#a", Attr: "HREF"},
		"bad":      {Selector: "p:contains(x)"},
		"svgHref":  {Selector: "svg a", Attr: "href"},
	}})
	want := map[string]any{
		"h":        "Hello big world",
		"items":    []any{"one", "two"},
		"ns":       []any{"1", nil},
		"href":     "http://example.com/docs/x.html?q=a%20b",
		"src":      "http://example.com/docs/pic.png",
		"raw":      "raw.html",
		"html":     `<b title="t" class="c">b</b> &lt;&amp;&gt;&nbsp;<br><script>1<2</script><!--c-->`,
		"tpl":      nil,
		"tplAll":   []any{},
		"noscript": nil,
		"hidden":   "hidden text",
		"missing":  nil,
		"none":     []any{},
		"absent":   nil,
		"upper":    "x.html?q=a b",
		"svgHref":  "/svg",
	}
	if !reflect.DeepEqual(r.Fields, want) {
		got, _ := json.MarshalIndent(r.Fields, "", " ")
		t.Fatalf("fields:\n%s", got)
	}
	if len(r.FieldErrors) != 1 || !strings.Contains(r.FieldErrors["bad"], ":contains") {
		t.Fatalf("fieldErrors = %v", r.FieldErrors)
	}
	if r.URL != "http://example.com/start/page.html#top" || r.Title != "A title" {
		t.Fatalf("url %q title %q", r.URL, r.Title)
	}
	if r.Text != nil || r.Links != nil || r.Meta != nil {
		t.Fatal("text, links or meta extracted without being asked for")
	}
}

func TestLinksAndMeta(t *testing.T) {
	r := extracted(t, page, "http://example.com/start/page.html", Options{Links: true, Meta: true, MaxLinks: 10})
	want := []Link{
		{Href: "http://example.com/docs/x.html?q=a%20b", Text: "X"},
		{Href: "http://example.com/docs/#f", Text: ""},
	}
	if !reflect.DeepEqual(r.Links, want) {
		t.Fatalf("links = %+v", r.Links)
	}
	wantMeta := map[string]string{
		"description": "D & more", "og:title": "OG", "refresh": "5",
		"canonical": "http://example.com/docs/canon.html", "lang": "de",
	}
	if !reflect.DeepEqual(r.Meta, wantMeta) {
		t.Fatalf("meta = %v", r.Meta)
	}
	if l := extracted(t, page, "http://example.com/", Options{Links: true, MaxLinks: 1}).Links; len(l) != 1 {
		t.Fatalf("MaxLinks 1 gave %d links", len(l))
	}
}

// TestMetaCap keeps at most 200 keys; a later tag cannot overwrite a key
// once 200 are held (the browser script checks the count first).
func TestMetaCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 210; i++ {
		fmt.Fprintf(&b, `<meta name="k%d" content="v">`, i)
	}
	b.WriteString(`<meta name="k0" content="late">`)
	m := parsed(t, b.String(), "http://x/").Meta()
	if len(m) != 200 || m["k0"] != "v" || m["k199"] != "v" || m["k200"] != "" {
		t.Fatalf("meta has %d keys, k0=%q k199=%q", len(m), m["k0"], m["k199"])
	}
}

// TestTextCut cuts at UTF-16 code units, never inside a surrogate pair;
// link texts cut inside a pair end with U+FFFD as the browser's do.
func TestTextCut(t *testing.T) {
	body := "<p>ab😀cd</p>"
	cases := []struct {
		max  int
		want string
		cut  bool
	}{{100, "ab😀cd", false}, {6, "ab😀cd", false}, {5, "ab😀c", true}, {4, "ab😀", true}, {3, "ab", true}, {2, "ab", true}}
	for _, c := range cases {
		got, cut := parsed(t, body, "http://x/").Text(c.max)
		if got != c.want || cut != c.cut {
			t.Errorf("Text(%d) = %q, %v; want %q, %v", c.max, got, cut, c.want, c.cut)
		}
	}
	long := strings.Repeat("x", 199) + "😀 tail"
	l := parsed(t, `<a href="/l">`+long+`</a>`, "http://x/").Links(5)
	if len(l) != 1 || l[0].Text != strings.Repeat("x", 199)+"\uFFFD" {
		t.Fatalf("link text = %q", l[0].Text)
	}
}

// TestText pins the innerText approximation on the cases that need care.
func TestText(t *testing.T) {
	cases := []struct{ html, want string }{
		{`<p>a</p><p>b</p>`, "a\n\nb"},
		{`<div>a</div><div>b</div>`, "a\nb"},
		{`a <b> b </b> c`, "a b c"},
		{`<div>  lead <i>x</i>  </div>`, "lead x"},
		{`line<br>next`, "line\nnext"},
		{`<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>`, "a\tb\nc\td"},
		{`<p>x</p><pre>  keep   this
  spacing</pre>`, "x\n\n  keep   this\n  spacing"},
		{`x <img src=a> y`, "x  y"},
		{`<div>Choose: <select><option>A</option><option>B</option></select> done</div>`, "Choose:\nA\nB\n done"},
		{`<div hidden>no</div><div style="display: none">no</div><script>no</script><style>no</style>yes`, "yes"},
		{`a<span style="visibility:hidden">b</span>c`, "ac"},
		{`<details><summary>S</summary>body</details>`, "S"},
		{`<textarea>t</textarea><input value=v>z`, "z"},
		{`<ul><li>1</li><li>2</li></ul>`, "1\n2"},
		{`<p>a</p><p></p><p></p><p>b</p>`, "a\n\nb"},
		{`<div>a<br><br><br><br>b</div>`, "a\n\nb"},
		{`nbsp&nbsp;&nbsp;x`, "nbsp\u00a0\u00a0x"},
		{`<div style="white-space:pre-line">a   b
c</div>`, "a b\nc"},
		{`<math><mi>x</mi><mo>=</mo><mi>ab</mi></math>`, "𝑥\n=\nab"},
		{`<svg><title>t</title><text>drawn</text></svg>`, "drawn"},
	}
	for _, c := range cases {
		got, _ := parsed(t, "<body>"+c.html, "http://x/").Text(1000)
		if got != c.want {
			t.Errorf("%s\n  got  %q\n  want %q", c.html, got, c.want)
		}
	}
}

// TestQuirksDoctype: an upper-case doctype name does not put the parser in
// quirks mode, where a <table> would stay inside an open <p>.
func TestQuirksDoctype(t *testing.T) {
	doc := `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/loose.dtd"><p>text<table><tr><td>cell</td></tr></table></p>`
	r := extracted(t, doc, "http://x/", Options{Fields: map[string]Field{"p": {Selector: "p", All: true}}})
	if !reflect.DeepEqual(r.Fields["p"], []any{"text", ""}) {
		t.Fatalf("paragraphs = %q", r.Fields["p"])
	}
	pre := extracted(t, "<pre>&#13;x\ny</pre>", "http://x/", Options{Fields: map[string]Field{"pre": {Selector: "pre", Attr: "html"}}})
	if pre.Fields["pre"] != "\rx\ny" {
		t.Fatalf("pre = %q", pre.Fields["pre"])
	}
}

func TestCompileSelector(t *testing.T) {
	for _, sel := range []string{"p:contains(x)", "a[href!=x]", "a[href#=(x)]", ":input", "div:haschild(p)", "p:matches(x)"} {
		if _, err := CompileSelector(sel); err == nil {
			t.Errorf("%s compiled", sel)
		}
	}
	for _, sel := range []string{`a[title=":contains"]`, "div > p:nth-child(2n+1)", "a[href^=http], img[src$='.png' i]", "p:not(.x):has(b)"} {
		if _, err := CompileSelector(sel); err != nil {
			t.Errorf("%s: %v", sel, err)
		}
	}
	e := NewExtractor(Options{Fields: map[string]Field{"ok": {Selector: "p"}, "bad": {Selector: "p["}}})
	if errs := e.FieldErrors(); len(errs) != 1 || errs["bad"] == "" {
		t.Fatalf("FieldErrors = %v", errs)
	}
}

func TestAppShell(t *testing.T) {
	fields := map[string]Field{"name": {Selector: "#name"}}
	cases := []struct {
		html   string
		fields map[string]Field
		want   string
	}{
		{`<div id="root"></div><script src="app.js"></script>`, nil, ShellNoText},
		{`<div id="root">Loading…</div><script src="app.js"></script>`, nil, ShellNoText},
		{`<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>`, nil, ShellNoscript},
		{`<h1 id="other">A page with plenty of text in it, and a script.</h1><script></script>`, fields, ShellNoFields},
		{`<h1 id="name">Item 1</h1><p>Generated page 1 with a script.</p><script></script>`, fields, ""},
		{`<p>Short.</p>`, nil, ""},
		{`<noscript><img src="/pixel.gif"></noscript><p>An ordinary page with enough text to count.</p><script></script>`, nil, ""},
	}
	for _, c := range cases {
		d := parsed(t, "<body>"+c.html, "http://x/")
		r := d.Extract(Options{Fields: c.fields})
		if got := d.AppShell(r); got != c.want {
			t.Errorf("%s: AppShell = %q, want %q", c.html, got, c.want)
		}
	}
}

func TestDifferentFields(t *testing.T) {
	a := map[string]any{"s": "x", "l": []any{"a", nil}, "n": nil, "only": "a"}
	b := map[string]any{"s": "x", "l": []string{"a"}, "n": nil, "other": nil}
	if got := DifferentFields(a, b); !reflect.DeepEqual(got, []string{"l", "only", "other"}) {
		t.Fatalf("DifferentFields = %q", got)
	}
	if got := DifferentFields(map[string]any{"l": []any{"a"}}, map[string]any{"l": []string{"a"}}); got != nil {
		t.Fatalf("equal lists differ: %q", got)
	}
}
