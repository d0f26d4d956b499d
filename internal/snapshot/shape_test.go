package snapshot

import (
	"github.com/go-rod/rod/lib/proto"

	"strconv"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for in, want := range map[string]int{"e1": 1, " e12 ": 12, "e999999999": 999999999} {
		if got, err := ParseRef(in); err != nil || got != want {
			t.Errorf("ParseRef(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "e", "e0", "e01", "E1", "e-1", "e+1", "e1x", "12", "e1234567890", "ref=e1"} {
		if _, err := ParseRef(in); err == nil {
			t.Errorf("ParseRef(%q) accepted", in)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"e1", "e12", " e3", "e0", "e١", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRef(s)
		if err != nil {
			return
		}
		if n < 1 || "e"+strconv.Itoa(n) != strings.TrimSpace(s) {
			t.Fatalf("ParseRef(%q) = %d: not the one spelling of a reference", s, n)
		}
	})
}

func TestRefsAreStableAndUnknownRefsRefused(t *testing.T) {
	r := NewRefs()
	a, b := r.ref(nodeKey{"f", 7}), r.ref(nodeKey{"f", 9})
	if a != "e1" || b != "e2" || r.ref(nodeKey{"f", 7}) != "e1" || r.ref(nodeKey{"g", 7}) != "e3" {
		t.Fatalf("refs %s %s not stable per node", a, b)
	}
	if k, err := r.lookup("ref", "e2"); err != nil || k != (nodeKey{"f", 9}) {
		t.Fatalf("lookup e2 = %v, %v", k, err)
	}
	// A new document forgets the old nodes; numbers go on.
	r.document("loader-1")
	if _, err := r.lookup("ref", "e1"); err == nil {
		t.Fatal("a reference of the previous document still resolves")
	}
	if got := r.ref(nodeKey{"f", 7}); got != "e4" {
		t.Fatalf("first node of the new document is %s; want e4", got)
	}
	for _, ref := range []string{"e1", "e5", "button"} {
		_, err := r.lookup("ref", ref)
		if err == nil || !strings.Contains(err.Error(), "INVALID_PARAMETER: ref: ") {
			t.Errorf("lookup(%q) = %v; want INVALID_PARAMETER naming ref", ref, err)
		}
	}
}

func body(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "e" + strconv.Itoa(i+1) + ` link "` + strings.Repeat("x", 30) + `"`
	}
	return out
}

func TestMaxTokensCutsAndFromReadsOn(t *testing.T) {
	lines := body(100)
	var got []string
	from, calls := 0, 0
	for {
		calls++
		s := shape("T", "http://h/", lines, NewRefs(), Options{MaxTokens: 300, From: from})
		if s.Tokens > 300 {
			t.Fatalf("snapshot of %d tokens over maxTokens 300", s.Tokens)
		}
		if s.Lines != 100 {
			t.Fatalf("Lines = %d; want 100", s.Lines)
		}
		parts := strings.Split(strings.TrimSuffix(s.Text, "\n"), "\n")[1:]
		if s.Next == 0 {
			got = append(got, parts...)
			break
		}
		last := parts[len(parts)-1]
		want := "… cut at maxTokens 300: " + strconv.Itoa(100-s.Next) + " more lines, read on with from=" + strconv.Itoa(s.Next)
		if last != want {
			t.Fatalf("marker %q; want %q", last, want)
		}
		got = append(got, parts[:len(parts)-1]...)
		from = s.Next
	}
	if calls < 4 || strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("%d calls read %d lines; want all 100 in order over several calls", calls, len(got))
	}
}

func TestChangedOnlyShowsNewAndGoneLines(t *testing.T) {
	r := NewRefs()
	shape("T", "u", []string{"a", "b", "b", "c"}, r, Options{})
	s := shape("T", "u", []string{"a", "b", "d"}, r, Options{ChangedOnly: true})
	want := "page \"T\" u\nchanges since the last snapshot: 3 lines\n+ d\n- b\n- c\n"
	if s.Text != want {
		t.Fatalf("changedOnly:\n%s\nwant:\n%s", s.Text, want)
	}
}

func TestRenderSummarisesLongListsKeepingControls(t *testing.T) {
	list := &node{role: "list", key: nodeKey{"f", 1}}
	for i := range 13 {
		item := &node{role: "listitem", key: nodeKey{"f", int64ID(10 + i)}}
		item.children = []*node{
			{role: "StaticText", name: "item text " + strconv.Itoa(i)},
			{role: "link", name: "go " + strconv.Itoa(i), key: nodeKey{"f", int64ID(100 + i)},
				children: []*node{{role: "StaticText", name: "go " + strconv.Itoa(i)}}},
		}
		list.children = append(list.children, item)
	}
	root := &node{role: "RootWebArea", children: []*node{list}}
	r := NewRefs()
	got := strings.Join(render(root, r, nil), "\n")
	if !strings.Contains(got, "item text 9\n") || strings.Contains(got, "item text 10") ||
		!strings.Contains(got, "… 3 more items, text left out (expand e1)\ne12 link \"go 10\"") ||
		!strings.Contains(got, `e14 link "go 12"`) || strings.Count(got, "go 3") != 1 {
		t.Fatalf("summarised list:\n%s", got)
	}
	all := strings.Join(render(root, r, map[string]bool{"e1": true}), "\n")
	if !strings.Contains(all, "item text 12") || strings.Contains(all, "more items") {
		t.Fatalf("expanded list:\n%s", all)
	}
}

func int64ID(i int) proto.DOMBackendNodeID { return proto.DOMBackendNodeID(i) }
