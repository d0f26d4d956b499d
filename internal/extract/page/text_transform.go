package page

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// transform applies text-transform t to the text of one text node, as
// Chromium's innerText shows it: uppercase and lowercase by Unicode's
// full case mappings (ß becomes SS), capitalize by upper-casing the first
// letter of each word, a word starting after any character that is not
// a letter, a digit or an apostrophe (so "foo-bar" becomes "Foo-Bar"),
// across element boundaries (w.prev is the last character seen).
func (w *textWalker) transform(s, t string) string {
	switch t {
	case "uppercase":
		s = cases.Upper(language.Und).String(s)
	case "lowercase":
		s = cases.Lower(language.Und).String(s)
	case "capitalize":
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if unicode.IsLetter(r) && !inWord(w.prev) {
				b.WriteString(cases.Title(language.Und, cases.NoLower).String(string(r)))
			} else {
				b.WriteRune(r)
			}
			w.prev = r
		}
		return b.String()
	}
	return s
}

// inWord reports whether r continues a word for capitalize.
func inWord(r rune) bool {
	return r != 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019')
}

// boxBoundary ends the word capitalize is in at the start and the end of
// a box of kind o that is not inline: a block, a cell, a row or an
// inline-block has a text run of its own, and Chromium capitalizes its
// first word whatever the text before it ends with ("Basseterre" then a
// block "overcast clouds" shows "Overcast Clouds", not "overcast
// Clouds").
func (w *textWalker) boxBoundary(o outer) {
	switch o {
	case outerBlock, outerAtomic, outerCell, outerRow:
		w.prev = 0
	}
}
