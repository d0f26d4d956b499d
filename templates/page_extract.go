package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// pageOut is everything recorded for one URL (an item's output and one
// entry of pages.json).
type pageOut struct {
	URL        string         `json:"url"`
	FinalURL   string         `json:"finalUrl"`
	HTTPStatus int            `json:"httpStatus"`
	Title      string         `json:"title"`
	Fields     map[string]any `json:"fields"`
	// FieldsCapped names the fields the caps cut (internal/extract/page/caps.go:
	// the same rule on both paths), saying how; absent when none was.
	FieldsCapped  map[string]page.FieldCap `json:"fieldsCapped,omitempty"`
	Text          *string                  `json:"text,omitempty"`
	TextTruncated bool                     `json:"textTruncated,omitempty"`
	Links         []page.Link              `json:"links,omitempty"`
	// FieldsOmitted is true in a result whose pages' fields passed
	// maxResultBytes: this page's fields are in pages.json only.
	FieldsOmitted bool `json:"fieldsOmitted,omitempty"`
	// LinksTruncated is true when the page had more than maxLinksPerPage
	// distinct links (only the first are in Links).
	LinksTruncated bool `json:"linksTruncated,omitempty"`
	// LinksCapped says how many links the page has and how many Links
	// (and a crawl's frontier) kept, when a cap left some out (links_cap.go).
	LinksCapped *linksCap         `json:"linksCapped,omitempty"`
	Meta        map[string]string `json:"meta,omitempty"`
	// RenderedBy says how the page was read: "browser" (Chromium) or
	// "http" (fetched and parsed without a browser; render "http").
	RenderedBy string `json:"renderedBy,omitempty"`
	// RenderReason says why render "auto" used the browser for this
	// page (render_auto.go); empty otherwise.
	RenderReason string        `json:"renderReason,omitempty"`
	Error        *engine.Error `json:"error"`
	// pageContent is what inputs.formats adds (formats_content.go).
	pageContent
	// Attempts is how many times the page was requested (inputs.retries:
	// more than 1 after a transient failure); FailedAttempts are the
	// attempts before the last that failed, each with its error and the
	// wait that followed (polite_pool.go).
	Attempts       int           `json:"attempts,omitempty"`
	FailedAttempts []attemptNote `json:"failedAttempts,omitempty"`
	// retryAfter is the last response's Retry-After (retryAfterSet: one
	// was read), for politeWork; over HTTP only.
	retryAfter    time.Duration
	retryAfterSet bool
	// linksFound is the extraction's count of distinct links (past the
	// cap), for a crawl to say what it cut (cutCrawlLinks).
	linksFound int
}

// withCaps is o with the text, link and field caps of every extraction:
// the same numbers on both paths (internal/extract/page/caps.go). Both
// paths take the same page.Options: its JSON is the browser script's cfg,
// and page.NewExtractor takes it as it is on the HTTP path.
func withCaps(o page.Options) page.Options {
	o.MaxText, o.MaxLinks = maxTextChars, maxLinksPerPage
	o.MaxValueChars, o.MaxFieldChars = page.DefaultMaxValueChars, page.DefaultMaxFieldChars
	o.MaxValues, o.MaxPageFieldChars = page.DefaultMaxValues, page.DefaultMaxPageFieldChars
	return o
}

// pageFields is inputs.fields as package page's fields; nil stays nil, so
// the script's cfg reads "fields": null as it always has.
func pageFields(fields map[string]fieldSpec) map[string]page.Field {
	if fields == nil {
		return nil
	}
	out := make(map[string]page.Field, len(fields))
	for name, f := range fields {
		out[name] = page.Field(f)
	}
	return out
}

// textJS is the one text rule in the browser (package page's
// element_text.go says it for both paths): an element's innerText (its
// textContent outside HTML), JavaScript white space collapsed and
// trimmed. Content under content-visibility: auto is rendered
// for the read first: Chromium leaves it out of innerText while it is
// skipped — far from the viewport, or in a tab that has not painted —
// and a reader sees it by scrolling (the HTTP path keeps it; hidden
// stays hidden). The elements looked at are those the page's readable
// style sheets and inline styles give content-visibility: auto; every
// element when a sheet cannot be read (another origin's) — about 2 ms
// per 1 000 elements. The page keeps that inline style after the read. extractJS (batch_extract_pages, crawl_site, run_steps) and
// outerHTMLExpr (extract_structured's x-selectors) carry it verbatim
// (TestOneTextRuleInEveryScript); bench reads extractJS from this file
// (bench/extract_script.go evaluates the constant expression).
const textJS = `  const clean = s => (s || '').replace(/\s+/g, ' ').trim();
  const elementText = el => clean(el.innerText !== undefined ? el.innerText : el.textContent);
  {
    // content-visibility: auto, rendered for the read (see textJS).
    const sels = ['[style*="content-visibility"]'];
    let all = false;
    const walk = rules => {
      for (const r of rules) {
        if (r.selectorText && r.style && r.style.getPropertyValue('content-visibility').trim() === 'auto') sels.push(r.selectorText);
        if (r.cssRules) walk(r.cssRules);
      }
    };
    for (const sh of document.styleSheets) { try { walk(sh.cssRules); } catch (e) { all = true; } }
    let els;
    try { els = document.querySelectorAll(all ? '*' : sels.join(',')); } catch (e) { els = document.querySelectorAll('*'); }
    for (const el of els) {
      if (getComputedStyle(el).contentVisibility === 'auto') el.style.setProperty('content-visibility', 'visible', 'important');
    }
  }
`

// extractJS collects title, fields, text, links and meta in one
// Runtime.evaluate: one CDP round trip per page instead of one per value.
const extractJS = `((cfg) => {
` + textJS + `  const val = (el, attr) => {
    if (!attr || attr === 'text') return elementText(el);
    if (attr === 'html') return el.innerHTML;
    if ((attr === 'href' || attr === 'src') && typeof el[attr] === 'string' && el[attr]) return el[attr];
    return el.getAttribute(attr);
  };
  const cut = (s, n) => {
    if (s.length <= n) return s;
    let end = n;
    const c = s.charCodeAt(end - 1);
    if (c >= 0xD800 && c <= 0xDBFF) end--;
    return s.slice(0, end);
  };
  const out = {url: location.href, title: document.title || '', fields: {}, fieldErrors: {}, fieldsCapped: {}};
  // The caps of internal/extract/page/caps.go, rule for rule: fields in name order
  // share the page's budget; a value is cut at maxValueChars; an all
  // field keeps at most maxValues values and stops before the one that
  // would pass maxFieldChars.
  let budget = cfg.maxPageFieldChars;
  const byName = (a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
  for (const [name, f] of Object.entries(cfg.fields || {}).sort(byName)) {
    try {
      if (f.all) {
        const els = document.querySelectorAll(f.selector);
        const left = Math.min(cfg.maxFieldChars, budget);
        const vals = []; let used = 0, nCut = 0;
        for (const el of els) {
          if (vals.length >= cfg.maxValues) break;
          let v = val(el, f.attr), short = false;
          if (typeof v === 'string') {
            if (v.length > cfg.maxValueChars) { v = cut(v, cfg.maxValueChars); short = true; }
            if (used + v.length > left) break;
            used += v.length;
            if (short) nCut++;
          }
          vals.push(v);
        }
        budget -= used;
        out.fields[name] = vals;
        if (vals.length !== els.length || nCut > 0) out.fieldsCapped[name] = {matches: els.length, kept: vals.length, cut: nCut};
      } else {
        const el = document.querySelector(f.selector);
        let v = el ? val(el, f.attr) : null;
        if (typeof v === 'string' && (v.length > cfg.maxValueChars || v.length > budget)) {
          const short = v.length > cfg.maxValueChars;
          if (short) v = cut(v, cfg.maxValueChars);
          if (v.length > budget) { v = null; out.fieldsCapped[name] = {matches: 1, kept: 0, cut: 0}; }
          else out.fieldsCapped[name] = {matches: 1, kept: 1, cut: 1};
        }
        if (typeof v === 'string') budget -= v.length;
        out.fields[name] = v;
      }
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
      // Past maxLinks the hrefs are only counted (linksFound).
      if (out.links.length >= cfg.maxLinks) { out.linksTruncated = true; continue; }
      out.links.push({href, text: clean(a.innerText || a.textContent).slice(0, 200)});
    }
    out.linksFound = seen.size;
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
func extract(ctx context.Context, tb *browser.Tab, o page.Options, out *pageOut) error {
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
func extractExpr(o page.Options) (string, error) {
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
	var x page.Result
	if err := json.Unmarshal(raw, &x); err != nil {
		return engine.Wrap(engine.ExecutionError, err, "decode extracted page: %v", err)
	}
	return mergeResult(&x, out)
}

// mergeResult merges an extraction's result x into out: the browser
// script's, decoded from its JSON (a page.Result's, field for field), or
// package page's own on the HTTP path, with no JSON in between. It is the
// one place a result becomes a pageOut. Errors: INVALID_PARAMETER naming
// the field whose selector is invalid.
func mergeResult(x *page.Result, out *pageOut) error {
	if out.FinalURL == "" {
		out.FinalURL = x.URL
	}
	out.Title, out.Fields, out.Text, out.TextTruncated = x.Title, x.Fields, x.Text, x.TextTruncated
	out.Links, out.Meta, out.LinksTruncated = x.Links, x.Meta, x.LinksTruncated
	out.linksFound, out.LinksCapped = x.LinksFound, linksCapOf(x.LinksFound, len(x.Links))
	out.FieldsCapped = nil
	if len(x.FieldsCapped) > 0 {
		out.FieldsCapped = x.FieldsCapped
	}
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
