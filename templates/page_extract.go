package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// pageLink is one link of a page.
type pageLink struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// pageOut is everything recorded for one URL (an item's output and one
// entry of pages.json).
type pageOut struct {
	URL           string            `json:"url"`
	FinalURL      string            `json:"finalUrl"`
	HTTPStatus    int               `json:"httpStatus"`
	Title         string            `json:"title"`
	Fields        map[string]any    `json:"fields"`
	Text          *string           `json:"text,omitempty"`
	TextTruncated bool              `json:"textTruncated,omitempty"`
	Links         []pageLink        `json:"links,omitempty"`
	Meta          map[string]string `json:"meta,omitempty"`
	// RenderedBy says how the page was read: "browser" (Chromium) or
	// "http" (fetched and parsed without a browser; render "http").
	RenderedBy string `json:"renderedBy,omitempty"`
	// RenderReason says why render "auto" used the browser for this
	// page (render_auto.go); empty otherwise.
	RenderReason string        `json:"renderReason,omitempty"`
	Error        *engine.Error `json:"error"`
}

// extracted is what the extraction script returns.
type extracted struct {
	URL           string            `json:"url"`
	Title         string            `json:"title"`
	Fields        map[string]any    `json:"fields"`
	FieldErrors   map[string]string `json:"fieldErrors"`
	Text          *string           `json:"text"`
	TextTruncated bool              `json:"textTruncated"`
	Links         []pageLink        `json:"links"`
	Meta          map[string]string `json:"meta"`
}

// extractOptions configure the extraction script.
type extractOptions struct {
	Fields   map[string]fieldSpec `json:"fields"`
	Text     bool                 `json:"text"`
	Links    bool                 `json:"links"`
	Meta     bool                 `json:"meta"`
	MaxText  int                  `json:"maxText"`
	MaxLinks int                  `json:"maxLinks"`
}

// extractJS collects title, fields, text, links and meta in one
// Runtime.evaluate: one CDP round trip per page instead of one per value.
const extractJS = `((cfg) => {
  const clean = s => (s || '').replace(/\s+/g, ' ').trim();
  const val = (el, attr) => {
    if (!attr || attr === 'text') return clean(el.innerText !== undefined ? el.innerText : el.textContent);
    if (attr === 'html') return el.innerHTML;
    if ((attr === 'href' || attr === 'src') && typeof el[attr] === 'string' && el[attr]) return el[attr];
    return el.getAttribute(attr);
  };
  const out = {url: location.href, title: document.title || '', fields: {}, fieldErrors: {}};
  for (const [name, f] of Object.entries(cfg.fields || {})) {
    try {
      if (f.all) out.fields[name] = Array.from(document.querySelectorAll(f.selector), el => val(el, f.attr));
      else { const el = document.querySelector(f.selector); out.fields[name] = el ? val(el, f.attr) : null; }
    } catch (e) { out.fieldErrors[name] = String((e && e.message) || e); }
  }
  if (cfg.text) {
    let t = document.body ? (document.body.innerText || '') : '';
    t = t.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
    if (t.length > cfg.maxText) {
      let end = cfg.maxText;
      const c = t.charCodeAt(end - 1);
      if (c >= 0xD800 && c <= 0xDBFF) end--;
      t = t.slice(0, end);
      out.textTruncated = true;
    }
    out.text = t;
  }
  if (cfg.links) {
    const seen = new Set(); out.links = [];
    for (const a of document.querySelectorAll('a[href]')) {
      // An <a> inside inline SVG has an SVGAnimatedString href: HTML links only.
      const href = a.href;
      if (typeof href !== 'string' || !href || seen.has(href)) continue;
      seen.add(href);
      out.links.push({href, text: clean(a.innerText || a.textContent).slice(0, 200)});
      if (out.links.length >= cfg.maxLinks) break;
    }
  }
  if (cfg.meta) {
    out.meta = {};
    for (const m of document.querySelectorAll('meta[name],meta[property],meta[http-equiv]')) {
      const k = m.getAttribute('name') || m.getAttribute('property') || m.getAttribute('http-equiv');
      const v = m.getAttribute('content');
      if (k && v !== null && Object.keys(out.meta).length < 200) out.meta[k] = v;
    }
    const canon = document.querySelector('link[rel="canonical"]');
    if (canon && canon.href) out.meta.canonical = canon.href;
    if (document.documentElement.lang) out.meta.lang = document.documentElement.lang;
  }
  return out;
})(%s)`

// extract runs the extraction script in tab tb and merges it into out.
// Errors: INVALID_PARAMETER naming the field whose selector is invalid, or
// what Tab.Eval returns.
func extract(ctx context.Context, tb *browser.Tab, o extractOptions, out *pageOut) error {
	expr, err := extractExpr(o)
	if err != nil {
		return err
	}
	raw, err := tb.Eval(ctx, expr)
	if err != nil {
		return err
	}
	return mergeExtracted(raw, out)
}

// extractExpr is the extraction script configured by o.
func extractExpr(o extractOptions) (string, error) {
	cfg, err := json.Marshal(o)
	if err != nil {
		return "", engine.Wrap(engine.ExecutionError, err, "encode extraction options: %v", err)
	}
	return fmt.Sprintf(extractJS, cfg), nil
}

// mergeExtracted merges the extraction script's value raw into out. Errors:
// INVALID_PARAMETER naming the field whose selector is invalid,
// EXECUTION_ERROR when raw is not the script's shape.
func mergeExtracted(raw json.RawMessage, out *pageOut) error {
	var x extracted
	if err := json.Unmarshal(raw, &x); err != nil {
		return engine.Wrap(engine.ExecutionError, err, "decode extracted page: %v", err)
	}
	if out.FinalURL == "" {
		out.FinalURL = x.URL
	}
	out.Title, out.Fields, out.Text, out.TextTruncated = x.Title, x.Fields, x.Text, x.TextTruncated
	out.Links, out.Meta = x.Links, x.Meta
	if out.Fields == nil {
		out.Fields = map[string]any{}
	}
	if len(x.FieldErrors) > 0 {
		names := make([]string, 0, len(x.FieldErrors))
		for n := range x.FieldErrors {
			names = append(names, n)
		}
		sort.Strings(names)
		return engine.Errorf(engine.InvalidParameter, "inputs.fields.%s: invalid selector: %s", names[0], x.FieldErrors[names[0]]).
			WithDetails(map[string]any{"field": "inputs.fields." + names[0]})
	}
	return nil
}
