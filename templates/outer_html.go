package templates

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
const outerHTMLExpr = `(() => {
  const root = document.documentElement;
  if (!root) return "";
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
  if (!tooDeep(root)) return root.outerHTML;
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
  const copy = root.cloneNode(true);
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
})()`
