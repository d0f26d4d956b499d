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

// TestDescribeSaysAFormTakesACard: Describe tells a button of a form with
// a card field (autocomplete cc-number, or an input named cvc) from one
// of a form without, whatever the button reads.
func TestDescribeSaysAFormTakesACard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Kasse</title><main>
<form method=post action=/a><label>Karte <input autocomplete="cc-number"></label><button>Weiter</button></form>
<form method=post action=/b><label>Prüfziffer <input name="card_cvc"></label><button>Fortfahren</button></form>
<form method=post action=/c><label>Name <input name="name" autocomplete="name"></label><button>Speichern</button></form>
</main>`)
	}))
	t.Cleanup(srv.Close)
	page := tabOn(t, srv.URL+"/")
	refs := NewRefs()
	snap, err := Take(t.Context(), page, refs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		pays bool
	}{{"Weiter", true}, {"Fortfahren", true}, {"Speichern", false}} {
		ref := ""
		for _, line := range strings.Split(snap.Text, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[1] == "button" && strings.Contains(line, `"`+c.name+`"`) {
				ref = f[0]
			}
		}
		if ref == "" {
			t.Fatalf("no button %q in the snapshot:\n%s", c.name, snap.Text)
		}
		d, err := Describe(t.Context(), page, refs, ref)
		if err != nil {
			t.Fatal(err)
		}
		if d.Pays != c.pays || !d.Submits || d.FormMethod != "post" || d.Name != c.name {
			t.Errorf("Describe(%s %q) = %+v, want pays %v, a POST submit", ref, c.name, d, c.pays)
		}
	}
}
