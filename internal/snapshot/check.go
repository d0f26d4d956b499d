package snapshot

import (
	"context"
	"strings"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// controlsJS marks every control of the document a person can see and
// use — links with an href, buttons, form fields but hidden inputs,
// selects, text areas, summaries and the elements whose role makes them
// one — with the attribute data-bt-control, and returns their count.
// Elements under aria-hidden or inert are left out: they are hidden from
// assistive technology, and so from the accessibility tree the snapshot
// reads, on purpose of the page's author.
const controlsJS = `() => {
  const sel = 'a[href], area[href], button, input:not([type=hidden]), select, textarea, summary,' +
    '[role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem],' +
    '[role=switch], [role=slider], [role=combobox], [role=textbox], [role=searchbox], [role=option]';
  let n = 0;
  for (const el of document.querySelectorAll(sel)) {
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    if (el.closest('[aria-hidden=true], [inert]')) continue;
    if (el.closest('select, datalist') && el.tagName !== 'SELECT') continue;
    el.setAttribute('data-bt-control', '');
    n++;
  }
  return n;
}`

// Missing holds the page to the snapshot: it finds every visible control
// of the main frame's DOM (see controlsJS) and returns how many there are
// and the outer HTML (cut) of those that have no reference in text, the
// snapshot just taken with refs. The bench and the tests use it; the
// attributes it sets are removed before it returns.
func Missing(ctx context.Context, page *rod.Page, refs *Refs, text string) (int, []string, error) {
	p := page.Context(ctx)
	res, err := p.Eval(controlsJS)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		_, _ = p.Eval(`() => { for (const el of document.querySelectorAll('[data-bt-control]')) el.removeAttribute('data-bt-control') }`)
	}()
	total := res.Value.Int()
	shown := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "" && f[0][0] == 'e' {
			shown[f[0]] = true
		}
	}
	ft, err := proto.PageGetFrameTree{}.Call(p)
	if err != nil {
		return 0, nil, err
	}
	depth := -1
	doc, err := proto.DOMGetDocument{Depth: &depth}.Call(p)
	if err != nil {
		return 0, nil, err
	}
	var missing []string
	var walk func(n *proto.DOMNode)
	walk = func(n *proto.DOMNode) {
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			if n.Attributes[i] != "data-bt-control" {
				continue
			}
			if ref, ok := refs.Has(ft.FrameTree.Frame.ID, n.BackendNodeID); !ok || !shown[ref] {
				html, _ := proto.DOMGetOuterHTML{BackendNodeID: n.BackendNodeID}.Call(p)
				s := ""
				if html != nil {
					s = cut(squash(html.OuterHTML), 160)
				}
				missing = append(missing, s)
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
		if n.ContentDocument != nil && n.ContentDocument.FrameID == ft.FrameTree.Frame.ID {
			walk(n.ContentDocument)
		}
	}
	walk(doc.Root)
	return total, missing, nil
}
