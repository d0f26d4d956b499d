package snapshot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

const formPage = `<!doctype html><title>Order</title><main>
<label>Name <input id=name value="old"></label>
<select id=size aria-label=Size><option value=s>Small<option value=m>Medium</select>
<button id=go onclick="document.getElementById('out').textContent = 'Ordered ' + document.getElementById('name').value + ' ' + size.value">Order</button>
<span id=tip hidden>Free delivery</span>
<a href="#" onmouseover="tip.hidden = false">Delivery</a>
<p id=out></p></main>`

// TestActByReference fills, selects, hovers and clicks by the references
// of a snapshot, and the next snapshot (changedOnly) shows what changed.
func TestActByReference(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, formPage)
	}))
	t.Cleanup(srv.Close)
	page := tabOn(t, srv.URL+"/")
	refs := NewRefs()
	first, err := Take(t.Context(), page, refs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "e1 textbox \"Name\" =\"old\"\n e2 combobox \"Size\" =\"Small\" of Small|Medium [collapsed]\n e3 button \"Order\"\n e4 link \"Delivery\"\n"
	if !strings.Contains(first.Text, want) {
		t.Fatalf("first snapshot:\n%s\nwant it to hold:\n%s", first.Text, want)
	}
	for _, a := range [][3]string{{"e1", "fill", "Ada"}, {"e2", "select", "Medium"}, {"e4", "hover", ""}, {"e3", "click", ""}} {
		if err := Act(t.Context(), page, refs, a[0], a[1], a[2]); err != nil {
			t.Fatalf("%s %s: %v", a[1], a[0], err)
		}
	}
	next, err := Take(t.Context(), page, refs, Options{ChangedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"+  e1 textbox \"Name\" =\"Ada\"", "+  e2 combobox \"Size\" =\"Medium\"", "+  Free delivery", "+  Ordered Ada m",
		"-  e1 textbox \"Name\" =\"old\""} {
		if !strings.Contains(next.Text, w) {
			t.Errorf("changed snapshot lacks %q:\n%s", w, next.Text)
		}
	}
	if strings.Contains(next.Text, "e3 button") {
		t.Errorf("changed snapshot repeats an unchanged line:\n%s", next.Text)
	}
	for _, c := range []struct{ ref, action, value, code, field string }{
		{"e99", "click", "", "INVALID_PARAMETER", "ref: "},
		{"button", "click", "", "INVALID_PARAMETER", "ref: "},
		{"e1", "smash", "", "INVALID_PARAMETER", "action: "},
		{"e2", "select", "Huge", "STEP_EXECUTION_FAILED", "select \"Huge\""},
	} {
		err := Act(t.Context(), page, refs, c.ref, c.action, c.value)
		e := engine.AsError(err)
		if e == nil || string(e.Code) != c.code || !strings.Contains(e.Message, c.field) {
			t.Errorf("%s %s %q: %v; want %s naming %q", c.action, c.ref, c.value, err, c.code, c.field)
		}
	}
}
