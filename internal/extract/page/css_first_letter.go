package page

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// firstLetterTransform is the cascaded property under which a
// ::first-letter rule's text-transform is kept. Pages style the first
// letter of a label instead of the label ("share" shown as "Share" by
// `.btn::first-letter { text-transform: uppercase }`), and Chromium's
// innerText shows the letter transformed: the HTTP path does too. Only
// text-transform matters among ::first-letter's properties (display,
// visibility and the rest do not apply to the pseudo-element or do not
// change innerText).
const firstLetterTransform = "::first-letter text-transform"

// ruleDecl is the declaration d as rule r keeps it: a ::first-letter rule
// keeps only text-transform, under firstLetterTransform; other rules keep
// every declaration that matters.
func ruleDecl(r cssRule, d cssDecl) (cssDecl, bool) {
	if !r.firstLetter {
		return d, true
	}
	if d.prop != "text-transform" {
		return cssDecl{}, false
	}
	d.prop = firstLetterTransform
	return d, true
}

// firstLetterBox reports whether a box of kind o has a ::first-letter: a
// block container (a block, a list item, an inline-block, a table cell).
// Inline boxes, rows and boxes that are not generated have none.
func firstLetterBox(o outer) bool {
	return o == outerBlock || o == outerAtomic || o == outerCell
}

// startFirstLetter notes, on entering element n laid out as l, the
// ::first-letter text-transform the next letter of the text takes; an
// inner block container with a rule of its own overrides its ancestor's.
// A replaced element or an inline-block met first ends the chance:
// content other than text precedes the letter on its line, and CSS then
// gives the block no first letter.
func (w *textWalker) startFirstLetter(n *html.Node, l layout) {
	if w.firstLetter != "" && (l.noChildren || l.outer == outerAtomic) {
		w.firstLetter, w.firstLetterOwner = "", nil
	}
	if !firstLetterBox(l.outer) || l.style == nil {
		return
	}
	switch t := l.style[firstLetterTransform]; t {
	case "uppercase", "lowercase", "capitalize":
		w.firstLetter, w.firstLetterOwner = t, n
	case "none":
		w.firstLetter, w.firstLetterOwner = "", nil
	}
}

// endFirstLetter drops a ::first-letter transform that found no letter
// inside its element n.
func (w *textWalker) endFirstLetter(n *html.Node) {
	if w.firstLetterOwner == n {
		w.firstLetter, w.firstLetterOwner = "", nil
	}
}

// cancelFirstLetter ends the first formatted line (a <br>) before a
// letter was found.
func (w *textWalker) cancelFirstLetter() { w.firstLetter, w.firstLetterOwner = "", nil }

// applyFirstLetter transforms the first letter or digit of text data when
// a ::first-letter transform is pending: the letter after any leading
// white space and punctuation (which CSS puts in the pseudo-element too,
// and text-transform leaves as it is). Text with no letter or digit
// leaves it pending.
func (w *textWalker) applyFirstLetter(data string) string {
	if w.firstLetter == "" {
		return data
	}
	for i, r := range data {
		if unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) {
			continue
		}
		t := w.firstLetter
		w.firstLetter, w.firstLetterOwner = "", nil
		if !unicode.IsLetter(r) {
			return data
		}
		var letter string
		if t == "lowercase" {
			letter = strings.ToLower(string(r))
		} else {
			// capitalize upper-cases the first letter of each word, and
			// this letter starts one.
			letter = strings.ToUpper(string(r))
		}
		return data[:i] + letter + data[i+utf8.RuneLen(r):]
	}
	return data
}
