package page

import (
	"github.com/tdewolff/parse/v2/css"
)

// recovered follows the parser past a parse error whose tokens vals it
// skipped. Inside an at-rule's block, a rule prelude that runs into the
// block's closing brace ("@-moz-document url-prefix() { visibility:
// hidden }", a Firefox-only hack in st-georg.de's critical CSS) is an
// error that consumes that "}": the parser then carries on at the outer
// level without an end-of-at-rule event. CSS Syntax closes the at-rule's
// block at that brace, as Chromium does; without this the walker would
// keep skipping what it took for the at-rule's content, and every later
// rule of the sheet would be lost.
func (w *sheetWalker) recovered(vals []css.Token) {
	if w.inRule || w.atDepth == 0 {
		return
	}
	for i := len(vals) - 1; i >= 0; i-- {
		switch vals[i].TokenType {
		case css.WhitespaceToken, css.CommentToken:
			continue
		case css.RightBraceToken:
			w.next(css.EndAtRuleGrammar, nil, nil)
		}
		return
	}
}
