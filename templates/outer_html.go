package templates

import (
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// outerHTMLExpr reads the loaded document as the browser holds it (after
// scripts ran) for extract_structured, which reads every page's data with
// our HTML parser. That parser refuses markup nested deeper than
// page.MaxDepth (parse_failure.go) and Chromium has no such limit,
// so a document deeper than flatDepth levels comes back flattened below
// that depth: each element at flatDepth keeps, in document order, copies
// of its innermost elements (those without child elements: links, values,
// scripts, meta) and the text between them, without the wrappers around
// them. Text, links and JSON-LD survive; microdata or RDFa nesting below
// that depth does not. A document within the limit is its outerHTML as
// is. (The depth is walked without recursion: the page may be deeper
// than the script engine's stack.)
//
// The HTML comes from a copy of the document, never the live page: on
// it, every element one of the schema's text x-selectors (sels) matches
// carries its text by the one rule (textJS's elementText) in
// page.BrowserTextAttr, which page.Document.TakeBrowserTexts reads, so an
// x-selector gives the string batch_extract_pages' field gives for the
// same element; any such attribute the page had is removed first.
const outerHTMLScript = `((sels) => {
` + textJS + `  const root = document.documentElement;
  if (!root) return "";
  const attr = '` + page.BrowserTextAttr + `';
  const marks = new Map();
  for (const s of sels) {
    let els = [];
    try { els = document.querySelectorAll(s); } catch (e) { continue; }
    for (const el of els) if (!marks.has(el)) marks.set(el, elementText(el));
  }
  const copy = root.cloneNode(true);
  for (const el of copy.querySelectorAll('[' + attr + ']')) el.removeAttribute(attr);
  if (copy.hasAttribute(attr)) copy.removeAttribute(attr);
  if (marks.size) {
    const wa = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    const wb = document.createTreeWalker(copy, NodeFilter.SHOW_ELEMENT);
    for (let a = wa.currentNode, b = wb.currentNode; a && b; a = wa.nextNode(), b = wb.nextNode()) {
      if (a.tagName !== b.tagName) break;
      if (marks.has(a)) b.setAttribute(attr, marks.get(a));
    }
  }
  const flatDepth = 400;
  const tooDeep = (top) => {
    const stack = [[top, 1]];
    while (stack.length) {
      const [el, d] = stack.pop();
      if (d >= flatDepth && el.firstElementChild) return true;
      for (const c of el.children) stack.push([c, d + 1]);
    }
    return false;
  };
  if (!tooDeep(copy)) return copy.outerHTML;
  const flatten = (el) => {
    const kept = [];
    const w = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      if (n.nodeType === Node.TEXT_NODE) {
        if (n.parentElement && n.parentElement.firstElementChild) kept.push(n.cloneNode());
      } else if (!n.firstElementChild) {
        kept.push(n.cloneNode(true));
      }
    }
    el.replaceChildren(...kept);
  };
  const stack = [[copy, 1]];
  while (stack.length) {
    const [el, d] = stack.pop();
    if (d >= flatDepth) {
      if (el.firstElementChild) flatten(el);
      continue;
    }
    for (const c of el.children) stack.push([c, d + 1]);
  }
  return copy.outerHTML;
})(%s)`

// outerHTMLExpr is outerHTMLScript for the text selectors sels.
func outerHTMLExpr(sels []string) string {
	if sels == nil {
		sels = []string{}
	}
	b, _ := json.Marshal(sels) // a []string always encodes
	return fmt.Sprintf(outerHTMLScript, b)
}
