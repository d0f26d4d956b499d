package fidelity

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Classes of a difference. Each names the likeliest cause, judged from the
// two readings and the page's own markup (Source); "other" is what none of
// the rules explains.
const (
	// ClassPageFailed: the page failed (error, status, final URL) on one
	// path only, or differently on both; ":script-navigation" or
	// ":timeout" follows when the cause is known (compare.go failure).
	ClassPageFailed = "page-failed"
	// ClassWhitespace: the same characters, whitespace placed differently
	// (a word boundary one path sees and the other not).
	ClassWhitespace = "whitespace"
	// ClassOrder: the same words in another order (layout: tables, floats).
	ClassOrder = "order"
	// ClassCSSHidden: the HTTP path keeps text the page's stylesheets hide.
	ClassCSSHidden = "css-hidden"
	// ClassHiddenMarkup: text inside a hidden attribute or an inline style
	// that hides it, read by one path only.
	ClassHiddenMarkup = "hidden-markup"
	// ClassNoscript: <noscript> content, which a browser with JavaScript
	// does not read.
	ClassNoscript = "noscript"
	// ClassDetails: the content of a closed <details>.
	ClassDetails = "details-closed"
	// ClassTemplate: <template> content.
	ClassTemplate = "template"
	// ClassScript: text or links the browser reads that the markup does
	// not hold: written by the page's scripts.
	ClassScript = "script-generated"
	// ClassTransform: the same words in another case (CSS text-transform).
	ClassTransform = "text-transform"
	// ClassCharset: replacement characters or another Unicode form:
	// decoding or entities.
	ClassCharset = "entity-charset"
	// ClassLinkResolution: the same links written differently (escaping,
	// base URL, host case).
	ClassLinkResolution = "link-resolution"
	// ClassLinkText: the same hrefs with different link text; the class
	// names the text's cause after a colon ("link-text:css-hidden").
	ClassLinkText = "link-text"
	// ClassCap: a cap (links, text length) applied on one path only.
	ClassCap = "cap"
	// ClassHTTPExtra: the HTTP path reads more, and the markup does not say
	// why (no hiding rule found).
	ClassHTTPExtra = "http-extra"
	// ClassBrowserExtra: the browser reads more text that is in the markup.
	ClassBrowserExtra = "browser-extra"
	// ClassOther: none of the rules above.
	ClassOther = "other"
)

// Tokens splits text into words (runs of letters, digits and marks) and
// single symbols (¶, §, punctuation), dropping whitespace: what the
// classifier counts.
func Tokens(text string) []string {
	var out []string
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, text[start:i])
			start = -1
		}
		if !unicode.IsSpace(r) && r != '\u200b' {
			out = append(out, string(r))
		}
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// NormalizeSpace collapses every run of whitespace to one space and trims:
// the "equal after whitespace normalisation" of the text figure.
func NormalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// classifyText names why browser text b and HTTP text h differ ("" when
// they are equal after whitespace normalisation), with a short detail.
// bothCut says both texts were cut at the length cap: the browser's, with
// less hidden text before the cut, then reaches further into the page, and
// its extra tail is not a difference.
func classifyText(b, h string, src *Source, bothCut bool) (class, detail string) {
	if NormalizeSpace(b) == NormalizeSpace(h) {
		return "", ""
	}
	if squash(b) == squash(h) {
		return ClassWhitespace, firstDiff(NormalizeSpace(b), NormalizeSpace(h))
	}
	bt, ht := Tokens(b), Tokens(h)
	onlyB, onlyH := minus(bt, ht), minus(ht, bt)
	if bothCut {
		bt = alignCut(bt, ht, len(onlyH))
		// The cap may end the HTTP text inside the word the browser's has
		// whole.
		if nb, nh := len(bt), len(ht); nb > 0 && nh > 0 && bt[nb-1] != ht[nh-1] && strings.HasPrefix(bt[nb-1], ht[nh-1]) {
			bt, ht = bt[:nb-1], ht[:nh-1]
		}
		onlyB, onlyH = minus(bt, ht), minus(ht, bt)
	}
	detail = tokenDetail(onlyB, onlyH)
	if bothCut {
		detail += " (both cut at the text cap)"
	}
	switch {
	case len(onlyB) == 0 && len(onlyH) == 0:
		return ClassOrder, firstDiff(NormalizeSpace(b), NormalizeSpace(h))
	case hasBadChars(onlyB) || hasBadChars(onlyH) || norm.NFC.String(b) == norm.NFC.String(h):
		return ClassCharset, detail
	}
	// Each side's extra tokens get their own cause; a page can have text
	// hidden by CSS and text written by a script at once.
	var parts []string
	if fb, fh := foldPairs(onlyB, onlyH); len(fb) < len(onlyB) {
		parts = append(parts, ClassTransform)
		onlyB, onlyH = fb, fh
	}
	if len(onlyH) > 0 {
		parts = append(parts, httpExtraClass(onlyH, src))
	}
	if len(onlyB) > 0 {
		parts = append(parts, browserExtraClass(onlyB, bt, src))
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), "+"), detail
}

// alignCut cuts the browser's tokens bt where the HTTP path's cut text ht
// ends: after the last place bt holds the eight tokens before ht's last
// (which the cap may have cut mid-word), plus one; or, when they are not
// found, after as many tokens as the two share (len(ht) − hiddenN).
func alignCut(bt, ht []string, hiddenN int) []string {
	const w = 8
	if len(ht) > w {
		tail := ht[len(ht)-w-1 : len(ht)-1]
		for i := len(bt) - w; i >= 0; i-- {
			if slices.Equal(bt[i:i+w], tail) {
				return bt[:min(i+w+1, len(bt))]
			}
		}
	}
	if n := len(ht) - hiddenN; n >= 0 && n < len(bt) {
		return bt[:n]
	}
	return bt
}

// browserExtraClass names why the browser read the tokens extra: more
// occurrences than the markup holds is a script's doing.
func browserExtraClass(extra, all []string, src *Source) string {
	if src == nil {
		return ClassBrowserExtra
	}
	seen := map[string]int{}
	for _, t := range all {
		seen[strings.ToLower(t)]++
	}
	for _, t := range extra {
		if l := strings.ToLower(t); seen[l] > src.Words[l] {
			return ClassScript
		}
	}
	return ClassBrowserExtra
}

// foldPairs removes the tokens of b and h that match case-insensitively
// but not exactly (CSS text-transform), returning what is left of each.
func foldPairs(b, h []string) ([]string, []string) {
	n := map[string]int{}
	for _, t := range h {
		n[strings.ToLower(t)]++
	}
	var restB []string
	used := map[string]int{}
	for _, t := range b {
		l := strings.ToLower(t)
		if n[l] > used[l] {
			used[l]++
			continue
		}
		restB = append(restB, t)
	}
	var restH []string
	for _, t := range h {
		l := strings.ToLower(t)
		if used[l] > 0 {
			used[l]--
			continue
		}
		restH = append(restH, t)
	}
	return restB, restH
}

// httpExtraClass names why the HTTP path kept the tokens extra.
func httpExtraClass(extra []string, src *Source) string {
	if src == nil {
		return ClassHTTPExtra
	}
	switch {
	case allIn(extra, src.Noscript):
		return ClassNoscript
	case allIn(extra, src.Hidden):
		return ClassHiddenMarkup
	case allIn(extra, src.Details):
		return ClassDetails
	case allIn(extra, src.Template):
		return ClassTemplate
	case src.HideRules:
		return ClassCSSHidden
	}
	return ClassHTTPExtra
}

// squash drops every whitespace character.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u200b' {
			return -1
		}
		return r
	}, s)
}

// minus is the multiset a − b.
func minus(a, b []string) []string {
	n := map[string]int{}
	for _, w := range b {
		n[w]++
	}
	var out []string
	for _, w := range a {
		if n[w] > 0 {
			n[w]--
			continue
		}
		out = append(out, w)
	}
	return out
}

// allIn reports whether every token (lower-cased) is in set.
func allIn(tokens []string, set map[string]bool) bool {
	for _, t := range tokens {
		if !set[strings.ToLower(t)] {
			return false
		}
	}
	return len(tokens) > 0
}

// hasBadChars reports a replacement character or typical mojibake.
func hasBadChars(tokens []string) bool {
	for _, t := range tokens {
		if strings.ContainsRune(t, '\ufffd') || strings.Contains(t, "Ã") || strings.Contains(t, "â€") {
			return true
		}
	}
	return false
}

// tokenDetail shows up to six tokens each path has more of.
func tokenDetail(onlyB, onlyH []string) string {
	return fmt.Sprintf("browser+%s http+%s", clip(onlyB), clip(onlyH))
}

// clip quotes up to six tokens and counts the rest.
func clip(ts []string) string {
	const show = 6
	var b strings.Builder
	b.WriteByte('[')
	for i, t := range ts {
		if i == show {
			fmt.Fprintf(&b, " …+%d", len(ts)-show)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%q", short(t, 40))
	}
	b.WriteByte(']')
	return b.String()
}

// firstDiff shows both strings around their first differing byte.
func firstDiff(b, h string) string {
	i := 0
	for i < len(b) && i < len(h) && b[i] == h[i] {
		i++
	}
	from := max(0, i-30)
	for from > 0 && from < len(b) && !isRuneStart(b[from]) {
		from--
	}
	return fmt.Sprintf("at %d: browser %q http %q", i, short(safeFrom(b, from), 70), short(safeFrom(h, from), 70))
}

// isRuneStart reports whether c begins a UTF-8 sequence.
func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

// safeFrom is s from byte i on ("" past its end), starting at a rune.
func safeFrom(s string, i int) string {
	if i >= len(s) {
		return ""
	}
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[i:]
}

// short cuts s to n runes with an ellipsis.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
