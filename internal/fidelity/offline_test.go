package fidelity

import (
	"testing"
)

// TestOfflineCauses: an AMP page Chromium read hidden (its runtime
// offline) and a page whose script navigated the browser to an empty
// document count as not finished in the browser, each with its cause,
// and are out of the figures' denominator; the same readings on a page
// without the AMP boilerplate or without a navigating script stay
// differences of reading. Shaped like the trafilatura corpus's
// popsugar.co.uk.halloween.html and refiner29.com-Verni.html.
func TestOfflineCauses(t *testing.T) {
	const amp = `<!doctype html><html amp><head><title>T</title><style amp-boilerplate>body{animation:-amp-start 8s steps(1,end) 0s 1 normal both}@keyframes -amp-start{from{visibility:hidden}to{visibility:visible}}</style></head><body><p>one two three four five six seven eight nine ten eleven</p></body></html>`
	const nav = `<!doctype html><html><head><title>T</title><script>if (location.host != 'www.example.com') { window.location = window.atob('aHR0cDovL2V4YW1wbGUuY29t') }</script></head><body><p>one two</p><a href="/x">x</a></body></html>`
	const plain = `<!doctype html><html><head><title>T</title><script type="application/ld+json">{"location": "x"}</script><style>.x{display:none}</style></head><body><p>one two three four five six seven eight nine ten eleven</p></body></html>`
	text := func(s string) *string { return &s }
	full := Page{URL: "u", FinalURL: "u", HTTPStatus: 200, Title: "T", Text: text("one two three four five six seven eight nine ten eleven"), Links: []Link{{Href: "http://h/x", Text: "x"}}}
	hiddenAMP := full
	hiddenAMP.Text = text("")
	empty := Page{URL: "u", FinalURL: "u", HTTPStatus: 200, Text: text("")}
	cases := []struct {
		name      string
		src       string
		b         Page
		wantClass string
		finished  int
	}{
		{"amp runtime offline", amp, hiddenAMP, ClassPageFailed + ":" + CauseAMPRuntime, 0},
		{"amp page read whole", amp, full, "", 1},
		{"script navigation to an empty document", nav, empty, ClassPageFailed + ":" + CauseScriptNavigation, 0},
		{"empty without a navigating script", plain, empty, ClassCSSHidden, 1},
		{"hidden without the amp boilerplate", plain, hiddenAMP, ClassCSSHidden, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := ParseSource([]byte(c.src), "http://h/p.html", nil)
			r := NewReport("c", "g")
			r.Add("p.html", c.b, full, src)
			if r.Finished != c.finished {
				t.Fatalf("finished %d, want %d", r.Finished, c.finished)
			}
			got := ""
			for _, d := range r.Diffs {
				if d.Aspect == AspectText {
					got = d.Class
				}
			}
			if got != c.wantClass {
				t.Fatalf("text class %q, want %q (diffs %+v)", got, c.wantClass, r.Diffs)
			}
			if c.finished == 0 && (len(r.Unfinished) != 1 || r.Unfinished[0].Class != c.wantClass || r.FailedBrowser != 1) {
				t.Fatalf("unfinished %+v, failed browser %d; want one %s", r.Unfinished, r.FailedBrowser, c.wantClass)
			}
		})
	}
}
