// Package snapshot turns a tab's accessibility tree into compact text a
// model can read and act on: landmarks and headings for orientation, every
// interactive element with a reference ("e12") the action tools accept,
// static text trimmed and deduplicated, long lists and tables summarised,
// iframes under their frame element, a token budget with a marker where it
// was cut, and on request only what changed since the tab's last snapshot.
//
// It reads Chromium's accessibility tree (CDP Accessibility.getFullAXTree,
// per frame) rather than walking the DOM in the page: the tree already
// carries computed roles, accessible names and states, it leaves out what a
// person cannot perceive (display:none, visibility:hidden, aria-hidden), and
// every node names its backend DOM node, which is stable for the node's life
// and so keys references that survive repeated snapshots of the same DOM.
package snapshot
