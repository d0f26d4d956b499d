package page

import (
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/internal/extract/weburl"
)

// mediaViewport is the screen @media rules and media attributes are
// evaluated for: the viewport of the browser the templates launch
// (--window-size=1280,800: a 1280 × 713 CSS px layout viewport in
// headless Chromium), at a device pixel ratio of 1, light colour scheme,
// no reduced motion, a fine pointer that can hover.
var mediaViewport = struct{ width, height float64 }{1280, 713}

// atRuleApplies reports whether the rules inside an at-rule block apply
// (see the comment on the caps in css.go): @media when its query matches
// the screen above, @supports unless its condition starts with "not",
// @layer always; other at-rules hold no rules for the element (@font-face,
// @keyframes, @page) or depend on layout (@container): not applied.
func atRuleApplies(name, prelude string) bool {
	switch strings.ToLower(name) {
	case "@media":
		return mediaMatches(prelude)
	case "@supports":
		return !strings.HasPrefix(strings.ToLower(strings.TrimSpace(prelude)), "not")
	case "@layer":
		return true
	}
	return false
}

// mediaMatches evaluates a media query list (the media attribute of
// <style> and <link>, an @media or @import prelude) for mediaViewport.
// An empty list matches; a list matches when one of its queries does;
// a query with a feature this does not know does not match.
func mediaMatches(list string) bool {
	list = strings.ToLower(strings.TrimSpace(list))
	if list == "" {
		return true
	}
	for _, q := range splitTopLevel(list, ',') {
		if mediaQueryMatches(strings.TrimSpace(q)) {
			return true
		}
	}
	return false
}

// mediaQueryMatches evaluates one media query.
func mediaQueryMatches(q string) bool {
	if q == "" {
		return false
	}
	negate := false
	if rest, ok := strings.CutPrefix(q, "not "); ok {
		negate, q = true, strings.TrimSpace(rest)
	} else if rest, ok := strings.CutPrefix(q, "only "); ok {
		q = strings.TrimSpace(rest)
	}
	ok := true
	for i, part := range splitAnd(q) {
		part = strings.TrimSpace(part)
		switch {
		case strings.HasPrefix(part, "("):
			ok = ok && featureMatches(strings.TrimSuffix(strings.TrimPrefix(part, "("), ")"))
		case i == 0:
			ok = ok && (part == "all" || part == "screen")
		default:
			ok = false
		}
	}
	return ok != negate
}

// splitAnd splits a media query at its top-level "and"s.
func splitAnd(q string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 0 && strings.HasPrefix(q[i:], " and ") {
				out = append(out, q[start:i])
				start = i + len(" and ")
				i = start - 1
			}
		}
	}
	return append(out, q[start:])
}

// featureMatches evaluates one media feature: "name: value" or a range
// ("width >= 600px", "400px < width < 800px"); unknown ones do not match.
func featureMatches(f string) bool {
	f = strings.TrimSpace(f)
	if strings.HasPrefix(f, "not ") || strings.Contains(f, " or ") || strings.Contains(f, "(") {
		return false
	}
	if name, val, ok := strings.Cut(f, ":"); ok {
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		switch name {
		case "min-width", "max-width", "width", "min-height", "max-height", "height",
			"min-device-width", "max-device-width", "min-device-height", "max-device-height":
			v, ok := cssLength(val)
			if !ok {
				return false
			}
			have := mediaViewport.width
			if strings.Contains(name, "height") {
				have = mediaViewport.height
			}
			switch {
			case strings.HasPrefix(name, "min-"):
				return have >= v
			case strings.HasPrefix(name, "max-"):
				return have <= v
			}
			return have == v
		case "orientation":
			return val == "landscape"
		case "prefers-color-scheme":
			return val == "light"
		case "prefers-reduced-motion", "prefers-reduced-data", "prefers-contrast", "forced-colors", "inverted-colors":
			return val == "no-preference" || val == "none"
		case "hover", "any-hover":
			return val == "hover"
		case "pointer", "any-pointer":
			return val == "fine"
		case "color":
			return true
		case "min-resolution", "max-resolution", "-webkit-min-device-pixel-ratio", "-webkit-max-device-pixel-ratio",
			"min--moz-device-pixel-ratio", "min-device-pixel-ratio", "max-device-pixel-ratio":
			r, ok := resolution(val)
			if !ok {
				return false
			}
			if strings.Contains(name, "min") {
				return r <= 1
			}
			return r >= 1
		}
		return false
	}
	switch f {
	case "color", "hover", "pointer", "any-hover", "any-pointer", "grid":
		return f != "grid"
	}
	return rangeMatches(f)
}

// rangeMatches evaluates the range syntax of width and height.
func rangeMatches(f string) bool {
	fields := strings.Fields(strings.NewReplacer("<=", " <= ", ">=", " >= ", "<", " < ", ">", " > ", "=", " = ").Replace(f))
	// Put back the two-character operators the replacer split.
	var toks []string
	for i := 0; i < len(fields); i++ {
		if (fields[i] == "<" || fields[i] == ">") && i+1 < len(fields) && fields[i+1] == "=" {
			toks = append(toks, fields[i]+"=")
			i++
			continue
		}
		toks = append(toks, fields[i])
	}
	value := func(t string) (float64, bool) {
		switch t {
		case "width":
			return mediaViewport.width, true
		case "height":
			return mediaViewport.height, true
		}
		return cssLength(t)
	}
	if len(toks) != 3 && len(toks) != 5 {
		return false
	}
	if !strings.Contains(f, "width") && !strings.Contains(f, "height") {
		return false
	}
	for i := 0; i+2 < len(toks); i += 2 {
		a, ok1 := value(toks[i])
		b, ok2 := value(toks[i+2])
		if !ok1 || !ok2 {
			return false
		}
		var ok bool
		switch toks[i+1] {
		case "<":
			ok = a < b
		case "<=":
			ok = a <= b
		case ">":
			ok = a > b
		case ">=":
			ok = a >= b
		case "=":
			ok = a == b
		}
		if !ok {
			return false
		}
	}
	return true
}

// cssLength reads a length in px (em and rem at 16px, 0 without unit).
func cssLength(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	unit := 1.0
	switch {
	case strings.HasSuffix(v, "px"):
		v = strings.TrimSuffix(v, "px")
	case strings.HasSuffix(v, "rem"):
		v, unit = strings.TrimSuffix(v, "rem"), 16
	case strings.HasSuffix(v, "em"):
		v, unit = strings.TrimSuffix(v, "em"), 16
	case v != "0":
		return 0, false
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return n * unit, true
}

// resolution reads a resolution as a device pixel ratio.
func resolution(v string) (float64, bool) {
	unit := 1.0
	switch {
	case strings.HasSuffix(v, "dppx"):
		v = strings.TrimSuffix(v, "dppx")
	case strings.HasSuffix(v, "dpi"):
		v, unit = strings.TrimSuffix(v, "dpi"), 1.0/96
	case strings.HasSuffix(v, "x"):
		v = strings.TrimSuffix(v, "x")
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, false
	}
	return n * unit, true
}

// resolveAgainst resolves ref against base with the URL Standard's
// parser; "" when either is not a URL.
func resolveAgainst(ref, base string) string {
	b, err := weburl.Parse(base)
	if err != nil {
		return ""
	}
	u, err := weburl.ParseRef(strings.TrimSpace(ref), b)
	if err != nil {
		return ""
	}
	return u.String()
}
