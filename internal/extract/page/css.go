package page

import (
	"bytes"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
)

// Style sheets decide what a browser's innerText shows: an element that
// a rule makes display: none, visibility: hidden or content-visibility:
// hidden has no text, a list item made inline joins its neighbours' line.
// The HTTP path reads the page's own sheets — <style> elements and
// <link rel=stylesheet> sheets the caller loads (package fetch: same
// origin only, under the URL policy and the page's budget), and their
// @import — with a real CSS parser (tdewolff/parse) and matches their
// selectors with cascadia, so that the text it extracts is the text
// Chromium's innerText gives.
//
// Only the properties that change innerText are kept: display,
// visibility, content-visibility, white-space (and white-space-collapse),
// text-transform, and float and position (which make an inline box a
// block). The cascade is the author origin's: !important first, then the
// style attribute over any selector, then specificity, then order; the
// browser's own defaults are the element tables of text.go. What is left
// out, and why the text can still differ:
//
//   - a rule whose selector cascadia cannot match (:hover and other
//     states, pseudo-elements: generated content is not in innerText
//     anyway; ::first-letter's text-transform is the one kept,
//     css_first_letter.go) or that uses a cascadia extension browsers
//     do not know;
//   - rules nested inside a rule (CSS nesting), @container, @scope and
//     any other at-rule but @media, @supports, @layer and @import;
//     @layer's order is not applied (layered rules count as unlayered);
//   - @supports conditions are taken as true unless they start with
//     "not" (Chromium supports what real sites test for);
//   - @media and the media attribute are evaluated for a screen the size
//     of the browser's default viewport (mediaViewport in css_media.go);
//   - a sheet past the caps below, and sheets from another origin, which
//     the HTTP path does not fetch (a browser applies them: their rules
//     are missing here, and Document.StyleReport names each such sheet).
const (
	// MaxStyleSheetBytes caps one style sheet: the rest of a larger one
	// is not read (the caller cuts a fetched sheet there too).
	MaxStyleSheetBytes = 4 << 20
	// MaxDocumentStyleBytes caps the style sheet bytes one page reads,
	// <style> elements and linked sheets together; later sheets are
	// skipped.
	MaxDocumentStyleBytes = 8 << 20
	// MaxStyleRules caps the rules kept for one page (a rule being one
	// selector of a selector list with a declaration that matters);
	// later rules are dropped.
	MaxStyleRules = 20000
	// MaxStyleSheets caps the sheets one page loads (links and @import
	// together); MaxImportDepth the nesting of @import.
	MaxStyleSheets = 64
	MaxImportDepth = 4
	// maxMatchWork caps the selector matches computing one page's styles
	// (elements × candidate rules); past it the remaining elements get no
	// rule from a sheet (their style attributes still count).
	maxMatchWork = 2_000_000
)

// textProps are the properties innerText depends on.
var textProps = map[string]bool{
	"display": true, "visibility": true, "content-visibility": true, "white-space": true,
	"white-space-collapse": true, "text-transform": true, "float": true, "position": true,
}

// StyleSheet is a parsed style sheet: the rules that can change a page's
// text and the sheets it imports. It is immutable once parsed and safe to
// share between documents (package fetch caches one per URL for a run).
type StyleSheet struct {
	rules   []cssRule
	imports []cssImport
	// Bytes is how many bytes of the sheet were read; Cut is true when
	// the sheet was longer than MaxStyleSheetBytes.
	Bytes int
	Cut   bool
	// rulesCut is true when the sheet had more than MaxStyleRules rules.
	rulesCut bool
}

// cssRule is one selector of a rule with the declarations that matter.
type cssRule struct {
	sel   cascadia.Sel
	spec  cascadia.Specificity
	key   ruleKey
	decls []cssDecl
	// firstLetter marks a ::first-letter rule: only its text-transform
	// is kept, as the property firstLetterTransform (css_first_letter.go).
	firstLetter bool
}

// cssDecl is one declaration: property, value (lower case, without
// !important) and its importance.
type cssDecl struct {
	prop, value string
	important   bool
}

// cssImport is an @import: the URL resolved against the sheet's, and its
// media list.
type cssImport struct {
	url, media string
}

// ParseStyleSheet parses the text of a style sheet whose URL is sheetURL
// (the document's base URL for a <style> element; it resolves @import).
// Bad CSS is skipped as a browser skips it: a declaration, a rule or an
// at-rule at a time. Never fails; at most MaxStyleSheetBytes are read.
func ParseStyleSheet(text, sheetURL string) *StyleSheet {
	s := &StyleSheet{}
	if len(text) > MaxStyleSheetBytes {
		text, s.Cut = text[:MaxStyleSheetBytes], true
	}
	s.Bytes = len(text)
	p := css.NewParser(parse.NewInputString(text), false)
	w := sheetWalker{s: s, base: sheetURL}
	stuck := 0
	for {
		gt, _, data := p.Next()
		if gt == css.ErrorGrammar {
			if p.HasParseError() {
				// A parse error the parser recovers from; guard against
				// one that does not move on.
				if stuck++; stuck > 1000 {
					break
				}
				w.recovered(p.Values())
				continue
			}
			break // io.EOF or a read error
		}
		stuck = 0
		w.next(gt, data, p.Values())
		if len(s.rules) >= MaxStyleRules {
			s.rulesCut = true
			break
		}
	}
	return s
}

// sheetWalker follows the parser's grammar events through a sheet.
type sheetWalker struct {
	s    *StyleSheet
	base string
	// skip counts open blocks whose content is not applied (a @media
	// that does not match, an unknown at-rule, a nested rule); rule is
	// the open rule's selectors (nil outside a rule or in one we drop).
	skip    int
	inRule  bool
	rule    []cssRule
	sawRule bool // a rule or at-rule other than @charset/@import/@layer seen
	// atDepth counts the at-rule blocks open (css_recover.go).
	atDepth int
}

// next handles one grammar event.
func (w *sheetWalker) next(gt css.GrammarType, data []byte, vals []css.Token) {
	switch gt {
	case css.AtRuleGrammar:
		if w.skip == 0 && !w.inRule && bytes.Equal(data, []byte("@import")) && !w.sawRule {
			if u, media := importOf(vals); u != "" {
				if abs := resolveAgainst(u, w.base); abs != "" {
					w.s.imports = append(w.s.imports, cssImport{url: abs, media: media})
				}
			}
		} else if !bytes.Equal(data, []byte("@charset")) && !bytes.Equal(data, []byte("@layer")) {
			w.sawRule = true
		}
	case css.BeginAtRuleGrammar:
		w.sawRule = true
		w.atDepth++
		if w.skip > 0 || w.inRule || !atRuleApplies(string(data), tokensText(vals)) {
			w.skip++
		}
	case css.EndAtRuleGrammar:
		w.atDepth = max(0, w.atDepth-1)
		if w.skip > 0 {
			w.skip--
		}
	case css.BeginRulesetGrammar:
		w.sawRule = true
		if w.skip > 0 || w.inRule {
			w.skip++
			return
		}
		w.inRule, w.rule = true, compileRule(vals)
	case css.EndRulesetGrammar:
		if w.skip > 0 {
			w.skip--
			return
		}
		w.inRule = false
		w.flush()
	case css.DeclarationGrammar:
		if w.skip == 0 && w.inRule && len(w.rule) > 0 {
			if d, ok := declOf(string(data), vals); ok {
				for i := range w.rule {
					if fd, keep := ruleDecl(w.rule[i], d); keep {
						w.rule[i].decls = append(w.rule[i].decls, fd)
					}
				}
			}
		}
	}
}

// flush keeps the finished rule's selectors if a declaration mattered.
func (w *sheetWalker) flush() {
	rules := w.rule
	w.rule = nil
	for _, r := range rules {
		if len(w.s.rules) >= MaxStyleRules {
			return
		}
		if len(r.decls) > 0 {
			w.s.rules = append(w.s.rules, r)
		}
	}
}

// compileRule compiles a rule's selector list, one cssRule per selector
// cascadia can match; selectors it cannot (or that carry a pseudo-element
// or a cascadia-only extension) are dropped, as a browser drops the
// selectors it does not know (it drops the whole list; keeping the rest
// only matters for lists browsers would refuse).
func compileRule(vals []css.Token) []cssRule {
	text := strings.TrimSpace(tokensText(vals))
	if text == "" || nonStandard(text) != "" {
		return nil
	}
	var out []cssRule
	for _, part := range splitTopLevel(text, ',') {
		part = strings.TrimSpace(part)
		match, specOf, ok := rewriteIsWhere(part)
		if !ok {
			continue
		}
		sel, err := cascadia.ParseWithPseudoElement(match)
		if err != nil || (sel.PseudoElement() != "" && sel.PseudoElement() != "first-letter") {
			// A pseudo-element (::before, :after…) styles generated
			// content, not the element; what cascadia cannot parse is
			// dropped too. ::first-letter styles the element's own
			// first letter, which innerText shows transformed.
			continue
		}
		spec := sel.Specificity()
		if specOf != match {
			if s, err := cascadia.ParseWithPseudoElement(specOf); err == nil {
				spec = s.Specificity()
			}
		}
		out = append(out, cssRule{sel: sel, spec: spec, key: keyOf(part), firstLetter: sel.PseudoElement() == "first-letter"})
	}
	return out
}

// declOf reads a declaration that matters for text.
func declOf(prop string, vals []css.Token) (cssDecl, bool) {
	prop = strings.ToLower(prop)
	if !textProps[prop] {
		return cssDecl{}, false
	}
	v := strings.ToLower(strings.TrimSpace(tokensText(vals)))
	d := cssDecl{prop: prop}
	if i := strings.LastIndex(v, "!"); i >= 0 && strings.TrimSpace(v[i+1:]) == "important" {
		v, d.important = strings.TrimSpace(v[:i]), true
	}
	if !validValue(prop, v) {
		return cssDecl{}, false
	}
	d.value = v
	return d, true
}

// keywords are the values Chromium accepts for each text property; a
// declaration with another value (a vendor value it does not know such
// as -ms-flexbox, a var() this cannot compute) is dropped, as a browser
// drops an invalid declaration, so an earlier valid one stays.
var keywords = map[string]map[string]bool{
	"display": setOf("none", "block", "inline", "inline-block", "flex", "inline-flex", "grid", "inline-grid",
		"flow-root", "contents", "list-item", "table", "inline-table", "table-row", "table-cell", "table-row-group",
		"table-header-group", "table-footer-group", "table-column", "table-column-group", "table-caption",
		"ruby", "ruby-text", "-webkit-box", "-webkit-inline-box", "math", "flow", "run-in", "inline-list-item"),
	"visibility":           setOf("visible", "hidden", "collapse"),
	"content-visibility":   setOf("visible", "hidden", "auto"),
	"white-space":          setOf("normal", "nowrap", "pre", "pre-wrap", "pre-line", "break-spaces", "collapse", "preserve", "preserve-breaks", "preserve-spaces", "wrap"),
	"white-space-collapse": setOf("collapse", "preserve", "preserve-breaks", "preserve-spaces", "break-spaces"),
	"text-transform":       setOf("none", "uppercase", "lowercase", "capitalize", "full-width", "full-size-kana", "math-auto"),
	"float":                setOf("none", "left", "right", "inline-start", "inline-end"),
	"position":             setOf("static", "relative", "absolute", "fixed", "sticky", "-webkit-sticky"),
}

// globalKeywords are valid for every property.
var globalKeywords = setOf("inherit", "initial", "unset", "revert", "revert-layer")

// validValue reports whether v is a value Chromium takes for prop (each
// space-separated part a keyword of the property: "block flex", "nowrap
// pre").
func validValue(prop, v string) bool {
	if v == "" || globalKeywords[v] {
		return v != ""
	}
	for _, part := range strings.Fields(v) {
		if !keywords[prop][part] {
			return false
		}
	}
	return true
}

// setOf makes a set of strings.
func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// parseDecls parses a style attribute's declarations that matter.
func parseDecls(s string) []cssDecl {
	p := css.NewParser(parse.NewInputString(s), true)
	var out []cssDecl
	for stuck := 0; stuck < 1000; {
		gt, _, data := p.Next()
		switch gt {
		case css.ErrorGrammar:
			if !p.HasParseError() {
				return out
			}
			stuck++
		case css.DeclarationGrammar:
			if d, ok := declOf(string(data), p.Values()); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// importOf reads an @import prelude: the URL and the media list after it.
func importOf(vals []css.Token) (u, media string) {
	rest := vals
	for i, t := range vals {
		switch t.TokenType {
		case css.WhitespaceToken:
			continue
		case css.StringToken:
			u = unquote(string(t.Data))
		case css.URLToken:
			u = urlTokenValue(string(t.Data))
		case css.FunctionToken:
			if !strings.EqualFold(string(t.Data), "url(") || i+1 >= len(vals) {
				return "", ""
			}
			u = unquote(string(vals[i+1].Data))
			rest = vals[i+1:]
			for j, t := range rest {
				if t.TokenType == css.RightParenthesisToken {
					rest = rest[j:]
					break
				}
			}
			return u, strings.TrimSpace(strings.TrimPrefix(tokensText(rest), ")"))
		default:
			return "", ""
		}
		return u, strings.TrimSpace(tokensText(vals[i+1:]))
	}
	return "", ""
}

// urlTokenValue is the URL inside a url(…) token.
func urlTokenValue(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 5 && strings.EqualFold(s[:4], "url(") && strings.HasSuffix(s, ")") {
		s = strings.TrimSpace(s[4 : len(s)-1])
	}
	return unquote(s)
}

// unquote removes a CSS string's quotes (escapes are rare in URLs and
// left as they are).
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// tokensText joins tokens back into text.
func tokensText(vals []css.Token) string {
	var b strings.Builder
	for _, t := range vals {
		b.Write(t.Data)
	}
	return b.String()
}

// splitTopLevel splits s at sep outside parentheses, brackets and
// quotes.
func splitTopLevel(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
