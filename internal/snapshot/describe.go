package snapshot

import (
	"context"
	"encoding/json"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Described is what a caller acting by reference learns of the element:
// a CSS selector that matched exactly it when asked (so the action can be
// replayed without the reference), its tag, type and the name a person
// reads on it, and its form (whether a click submits one, and how).
type Described struct {
	Selector   string `json:"selector"`
	Tag        string `json:"tag"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Submits    bool   `json:"submits"`
	InForm     bool   `json:"inForm"`
	FormMethod string `json:"formMethod"`
}

// describeJS computes Described for this: a selector by id, then by tag
// and name, then a path of :nth-of-type steps from the nearest ancestor
// with a unique id (or the root), each checked to match one element.
const describeJS = `function () {
  const el = this, doc = el.ownerDocument;
  const unique = s => { try { return doc.querySelectorAll(s).length === 1 && doc.querySelector(s) === el; } catch (e) { return false; } };
  const esc = s => CSS.escape(s);
  let sel = '';
  if (el.id && unique('#' + esc(el.id))) sel = '#' + esc(el.id);
  const tag = el.tagName.toLowerCase();
  const nm = el.getAttribute('name');
  if (!sel && nm && unique(tag + '[name="' + nm.replace(/["\\]/g, '\\$&') + '"]')) sel = tag + '[name="' + nm.replace(/["\\]/g, '\\$&') + '"]';
  if (!sel) {
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1 && n !== doc.documentElement) {
      if (n !== el && n.id && unique('#' + esc(n.id))) { parts.unshift('#' + esc(n.id)); break; }
      let i = 1, s = n;
      while ((s = s.previousElementSibling)) if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
      n = n.parentElement;
    }
    if (parts.length && !parts[0].startsWith('#')) parts.unshift('html');
    sel = parts.join(' > ');
    if (!unique(sel)) sel = '';
  }
  const type = (el.getAttribute('type') || '').toLowerCase();
  const form = el.form || el.closest('form');
  const submits = !!form && ((tag === 'button' && (type === '' || type === 'submit')) || (tag === 'input' && (type === 'submit' || type === 'image')));
  const name = (el.getAttribute('aria-label') || el.innerText || el.value || el.getAttribute('title') || '').trim().slice(0, 200);
  return JSON.stringify({selector: sel, tag, type, name, submits, inForm: !!form,
    formMethod: form ? (form.getAttribute('method') || 'get').toLowerCase() : ''});
}`

// Describe tells what the element ref names on page is: see Described.
// Errors: as Act's for an unknown or vanished reference.
func Describe(ctx context.Context, page *rod.Page, refs *Refs, ref string) (*Described, error) {
	k, err := refs.lookup("ref", ref)
	if err != nil {
		return nil, err
	}
	p := page.Context(ctx)
	res, err := proto.DOMResolveNode{BackendNodeID: k.backend}.Call(p)
	if err != nil {
		return nil, &engine.Error{Code: engine.StepExecutionFailed, Message: "ref " + ref + " is no longer on the page", Err: err,
			Recovery: "take a new snapshot: the page changed since the reference was given"}
	}
	el, err := p.ElementFromObject(res.Object)
	if err != nil {
		return nil, err
	}
	out, err := el.Eval(describeJS)
	if err != nil {
		return nil, err
	}
	d := &Described{}
	if err := json.Unmarshal([]byte(out.Value.Str()), d); err != nil {
		return nil, err
	}
	return d, nil
}
