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
// reads on it, and its form (whether a click submits one, and how, and
// whether the form takes a payment card: Pays).
type Described struct {
	Selector   string `json:"selector"`
	Tag        string `json:"tag"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Submits    bool   `json:"submits"`
	InForm     bool   `json:"inForm"`
	FormMethod string `json:"formMethod"`
	// Pays: the element's form holds a payment card's field (an
	// autocomplete token cc-number, cc-csc, cc-exp…, or an input named for
	// a card number or its security code), whatever the page's language.
	Pays bool `json:"pays"`
}

// selectorJS is a function of an element returning a CSS selector that
// matches exactly it: by id, then by tag and name, then a path of
// :nth-of-type steps from the nearest ancestor with a unique id (or the
// root); "" when none holds.
const selectorJS = `function selectorOf(el) {
  const doc = el.ownerDocument;
  const unique = s => { try { return doc.querySelectorAll(s).length === 1 && doc.querySelector(s) === el; } catch (e) { return false; } };
  const esc = s => CSS.escape(s);
  if (el.id && unique('#' + esc(el.id))) return '#' + esc(el.id);
  const tag = el.tagName.toLowerCase();
  const nm = el.getAttribute('name');
  if (nm) {
    const s = tag + '[name="' + nm.replace(/["\\]/g, '\\$&') + '"]';
    if (unique(s)) return s;
  }
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
  const sel = parts.join(' > ');
  return unique(sel) ? sel : '';
}`

// describeJS computes Described for this.
const describeJS = `function () {
  ` + selectorJS + `
  const el = this, tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const form = el.form || el.closest('form');
  const submits = !!form && ((tag === 'button' && (type === '' || type === 'submit')) || (tag === 'input' && (type === 'submit' || type === 'image')));
  const name = (el.getAttribute('aria-label') || el.innerText || el.value || el.getAttribute('title') || '').trim().slice(0, 200);
  const pays = !!form && !!form.querySelector('[autocomplete*="cc-number" i], [autocomplete*="cc-csc" i], [autocomplete*="cc-exp" i], ' +
    'input[name*="cardnumber" i], input[name*="card_number" i], input[name*="card-number" i], input[name*="cvc" i], input[name*="cvv" i]');
  return JSON.stringify({selector: selectorOf(el), tag, type, name, submits, inForm: !!form,
    formMethod: form ? (form.getAttribute('method') || 'get').toLowerCase() : '', pays});
}`

// textSelectorJS finds the innermost element of the page whose text
// holds the given text and returns its selector ("" when none).
const textSelectorJS = `function (text) {
  ` + selectorJS + `
  const norm = s => s.replace(/\s+/g, ' ').trim();
  const want = norm(text);
  if (!want || !document.body) return '';
  let best = null;
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('script,style,noscript,template')) continue;
    if (norm(el.innerText || '').includes(want)) best = el;
  }
  return best ? selectorOf(best) : '';
}`

// SelectorOfText returns a CSS selector of the innermost element of page
// whose text holds text, so that a value read from a page's text can be
// read again without a model; "" when no element holds it.
func SelectorOfText(ctx context.Context, page *rod.Page, text string) (string, error) {
	res, err := page.Context(ctx).Eval(textSelectorJS, text)
	if err != nil {
		return "", err
	}
	return res.Value.Str(), nil
}

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
