package snapshot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRender builds a tree from arbitrary roles and names (what a page
// controls) and checks the renderer: it ends, every line is valid UTF-8
// without a line break inside, and no name runs past its limit.
func FuzzRender(f *testing.F) {
	f.Add("link\x00button\x00list\x00listitem\x00StaticText", "a \"b\"\nc\\", uint8(7))
	f.Add("heading\x00Iframe\x00table\x00row\x00cell", strings.Repeat("é", 200), uint8(3))
	f.Fuzz(func(t *testing.T, roles, name string, shape uint8) {
		rs := strings.Split(roles, "\x00")
		if len(rs) > 50 {
			rs = rs[:50]
		}
		root := &node{role: "RootWebArea"}
		nodes := []*node{root}
		for i, role := range rs {
			n := &node{role: role, name: name, value: name, key: nodeKey{"f", int64ID(i + 1)},
				props: map[string]string{"level": name, "checked": "mixed", "expanded": "false"}}
			parent := nodes[(int(shape)*(i+1))%len(nodes)]
			parent.children = append(parent.children, n)
			nodes = append(nodes, n)
		}
		for _, l := range render(root, NewRefs(), nil) {
			if !utf8.ValidString(l) && utf8.ValidString(name) {
				t.Fatalf("invalid UTF-8 line %q", l)
			}
			if strings.ContainsAny(l, "\n\r") {
				t.Fatalf("line break inside %q", l)
			}
			if utf8.RuneCountInString(strings.TrimSpace(l)) > 400 {
				t.Fatalf("line of %d runes", utf8.RuneCountInString(l))
			}
		}
	})
}
