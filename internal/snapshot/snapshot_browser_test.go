package snapshot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-rod/rod"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/fixture"
)

// richPage has one of every kind of control, a long list, a long table,
// an iframe and controls a person cannot see.
func richPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>Rich "page"</title>
<header><nav aria-label="Top"><a href="/">Home</a> <a href="/about">About us</a></nav></header>
<main><h1>Catalogue</h1><p>Welcome to the catalogue.</p><p>Welcome to the catalogue.</p>
<form aria-label="Search"><label>Query <input name=q value="mugs" required></label>
<label><input type=checkbox checked> In stock</label>
<label><input type=radio name=r> New</label><label><input type=radio name=r disabled> Used</label>
<select aria-label="Size"><option>S<option selected>M<option>L</select>
<textarea aria-label="Note"></textarea><input type=range aria-label="Price"><input type=hidden name=tok value=x>
<button>Search</button><div role=button tabindex=0>Fancy</div></form>
<details><summary>More filters</summary><p>none</p></details>
<button style="display:none">Hidden</button><a href="/x" aria-hidden="true">Decor</a>
<p>A note<a role="doc-noteref" href="#n1">[1]</a></p><p id=n1><a role="doc-backlink" href="#">1</a> the note</p>
<h2>Products</h2><ul>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<li>Product %d is a fine thing <a href="/p/%d">open %d</a></li>`, i, i, i)
	}
	b.WriteString(`</ul><table><tr><th>Name<th>Price</tr>`)
	for i := range 25 {
		fmt.Fprintf(&b, `<tr><td>Row %d<td>%d.00</tr>`, i, i)
	}
	b.WriteString(`</table><iframe title="Pay" srcdoc="<button>Pay now</button><input aria-label=Card>"></iframe></main>
<footer><a href="/legal">Legal</a></footer>`)
	return b.String()
}

// tabOn opens a tab of a fresh browser on url and returns its page.
func tabOn(t *testing.T, url string) *rod.Page {
	t.Helper()
	fixture.NeedChromium(t)
	m := browser.NewManager(browser.Options{TempDir: t.TempDir()})
	t.Cleanup(func() { _ = m.Close() })
	ctx, cancel := fixture.Context(t)
	t.Cleanup(cancel)
	s, err := m.Session(ctx, "snapshot-test")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Release(false) })
	if _, err := tb.Navigate(ctx, url, "load"); err != nil {
		t.Fatal(err)
	}
	return tb.Page()
}

func TestSnapshotShowsEveryControlOfARichPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, richPage())
	}))
	t.Cleanup(srv.Close)
	page := tabOn(t, srv.URL+"/")
	refs := NewRefs()
	snap, err := Take(t.Context(), page, refs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + snap.Text)
	total, missing, err := Missing(t.Context(), page, refs, snap.Text)
	if err != nil {
		t.Fatal(err)
	}
	// 3 nav/footer links, q, checkbox, 2 radios, select, textarea, range,
	// Search, Fancy, summary, 2 footnote links (DPUB roles), 40 product links.
	if total != 55 || len(missing) != 0 {
		t.Fatalf("controls %d (want 55), missing %d: %q", total, len(missing), missing)
	}
	for _, want := range []string{
		`page "Rich \"page\"" ` + srv.URL + "/\n",
		"[nav \"Top\"]", "# Catalogue", "## Products",
		`textbox "Query" ="mugs" [required]`, `checkbox "In stock" [checked]`,
		`radio "Used" [disabled]`, `combobox "Size" ="M" of S|M|L`, `button "Fancy"`,
		"… 30 more items, text left out (expand e", "… 16 more rows, text left out (expand e",
		"Row 8 | 8.00", `iframe "Pay"`, `button "Pay now"`, `link "open 39"`,
	} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("snapshot lacks %q", want)
		}
	}
	for _, not := range []string{"Hidden", "Decor", "Product 39", "Row 9 |", "Query\n"} {
		if strings.Contains(snap.Text, not) {
			t.Errorf("snapshot shows %q", not)
		}
	}
	if strings.Count(snap.Text, "Welcome to the catalogue.") != 1 {
		t.Errorf("repeated text not deduplicated")
	}
}
