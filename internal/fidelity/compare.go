package fidelity

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// Aspects compared on every page, in report order.
const (
	AspectTitle  = "title"
	AspectText   = "text"
	AspectLinks  = "links"
	AspectMeta   = "meta"
	AspectFields = "fields"
)

// Aspects lists them in report order.
var Aspects = []string{AspectTitle, AspectText, AspectLinks, AspectMeta, AspectFields}

// Diff is one difference of one aspect of one page.
type Diff struct {
	Page   string // the page's path in its corpus
	Aspect string // one of Aspects
	Class  string // one of the Class constants
	Detail string // a short, quoted excerpt of what differs
}

// Compare lists the differences between the browser's page b and the HTTP
// path's page h (at most one per aspect; fields give one per differing
// field, under the aspect "fields"). Title and fields compare exactly,
// text after whitespace normalisation, links as the ordered list of
// (href, text), meta as the map. A page that failed on one path only, or
// differently, differs in every aspect with ClassPageFailed. src (may be
// nil) is the page's markup, which the classes are judged from.
func Compare(name string, b, h Page, src *Source) []Diff {
	var out []Diff
	add := func(aspect, class, detail string) {
		out = append(out, Diff{Page: name, Aspect: aspect, Class: class, Detail: detail})
	}
	b = markOffline(b, h, src)
	if class, why := failure(b, h); why != "" {
		for _, a := range Aspects {
			add(a, class, why)
		}
		return out
	}
	if b.Error != nil { // failed alike on both paths: nothing else to read
		return nil
	}
	if b.Title != h.Title {
		c, d := classifyText(b.Title, h.Title, src, false)
		if c == "" {
			c, d = ClassWhitespace, fmt.Sprintf("browser %q http %q", b.Title, h.Title)
		}
		add(AspectTitle, c, d)
	}
	if c, d := classifyText(deref(b.Text), deref(h.Text), src, b.TextTruncated && h.TextTruncated); c != "" {
		add(AspectText, c, d)
	} else if b.TextTruncated != h.TextTruncated {
		add(AspectText, ClassCap, fmt.Sprintf("textTruncated browser %v http %v", b.TextTruncated, h.TextTruncated))
	}
	if c, d := classifyLinks(b, h, src); c != "" {
		add(AspectLinks, c, d)
	}
	if !reflect.DeepEqual(nonNil(b.Meta), nonNil(h.Meta)) {
		c, d := classifyMeta(b.Meta, h.Meta, src)
		add(AspectMeta, c, d)
	}
	names := make([]string, 0, len(b.Fields)+len(h.Fields))
	for n := range b.Fields {
		names = append(names, n)
	}
	for n := range h.Fields {
		if _, ok := b.Fields[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		bv, hv := b.Fields[n], h.Fields[n]
		if reflect.DeepEqual(bv, hv) {
			continue
		}
		c, d := classifyText(fieldText(bv), fieldText(hv), src, false)
		if c == "" {
			c, d = ClassWhitespace, fmt.Sprintf("browser %q http %q", fieldText(bv), fieldText(hv))
		}
		add(AspectFields, c, n+": "+d)
	}
	return out
}

// failure says how the page failed on one path only or differently, and
// its class: ClassPageFailed, with the cause after a colon when it is
// known ("page-failed:script-navigation": the page's script took the
// browser elsewhere, e.g. to https; "page-failed:timeout": the load event
// did not come in time). Both are "" when both paths read the page alike
// (both succeeded, or both failed with the same code and status).
func failure(b, h Page) (class, detail string) {
	code := func(p Page) string {
		if p.Error == nil {
			return "ok"
		}
		return p.Error.ErrorCode
	}
	switch {
	case code(b) != code(h):
		detail = fmt.Sprintf("browser %s (%s) http %s (%s)", code(b), errMsg(b), code(h), errMsg(h))
	case b.HTTPStatus != h.HTTPStatus:
		detail = fmt.Sprintf("httpStatus browser %d http %d", b.HTTPStatus, h.HTTPStatus)
	case b.FinalURL != h.FinalURL:
		detail = fmt.Sprintf("finalUrl browser %q http %q", b.FinalURL, h.FinalURL)
	default:
		return "", ""
	}
	class = ClassPageFailed
	switch {
	case h.Error == nil && b.Error != nil && b.Error.ErrorCode == "OFFLINE":
		class += ":" + b.Error.Message
	case h.Error == nil && b.Error != nil && strings.Contains(b.Error.Message, "redirected to"),
		h.Error == nil && b.Error == nil && b.FinalURL != h.FinalURL && h.FinalURL == h.URL:
		class += ":script-navigation"
	case h.Error == nil && b.Error != nil && b.Error.ErrorCode == "NAVIGATION_TIMEOUT":
		class += ":timeout"
	}
	return class, detail
}

// errMsg is a page error's message, cut short.
func errMsg(p Page) string {
	if p.Error == nil {
		return ""
	}
	return short(p.Error.Message, 160)
}

// classifyLinks names why the link lists differ ("" when equal).
func classifyLinks(b, h Page, src *Source) (string, string) {
	if slices.Equal(b.Links, h.Links) {
		if b.LinksTruncated != h.LinksTruncated {
			return ClassCap, fmt.Sprintf("linksTruncated browser %v http %v", b.LinksTruncated, h.LinksTruncated)
		}
		return "", ""
	}
	if b.LinksTruncated != h.LinksTruncated {
		return ClassCap, fmt.Sprintf("linksTruncated browser %v http %v, %d/%d links", b.LinksTruncated, h.LinksTruncated, len(b.Links), len(h.Links))
	}
	bh, hh := hrefs(b.Links), hrefs(h.Links)
	if slices.Equal(bh, hh) {
		for i := range b.Links {
			if b.Links[i].Text != h.Links[i].Text {
				c, d := classifyText(b.Links[i].Text, h.Links[i].Text, src, false)
				if c == "" {
					c = ClassWhitespace
					d = fmt.Sprintf("browser %q http %q", b.Links[i].Text, h.Links[i].Text)
				}
				return ClassLinkText + ":" + c, fmt.Sprintf("(%s) %s: %s", local([]string{bh[i]})[0], countTextDiffs(b.Links, h.Links), d)
			}
		}
	}
	onlyB, onlyH := minus(bh, hh), minus(hh, bh)
	detail := fmt.Sprintf("%d/%d links; browser+%s http+%s", len(b.Links), len(h.Links), clip(local(onlyB)), clip(local(onlyH)))
	switch {
	case len(onlyB) == 0 && len(onlyH) == 0:
		return ClassOrder, detail
	case len(onlyB) == len(onlyH) && sameLinksLoosely(onlyB, onlyH):
		return ClassLinkResolution, detail
	case len(onlyH) == 0:
		if src != nil && !allHrefsIn(onlyB, src.Hrefs) {
			return ClassScript, detail
		}
		return ClassBrowserExtra, detail
	case len(onlyB) == 0:
		if src != nil && allHrefsIn(onlyH, src.NoscriptHrefs) {
			return ClassNoscript, detail
		}
		return ClassHTTPExtra, detail
	}
	if src != nil && !allHrefsIn(onlyB, src.Hrefs) {
		return ClassScript, detail
	}
	return ClassOther, detail
}

// countTextDiffs says how many links differ in text only.
func countTextDiffs(b, h []Link) string {
	n := 0
	for i := range b {
		if b[i].Text != h[i].Text {
			n++
		}
	}
	return fmt.Sprintf("%d link text(s) differ", n)
}

// hrefs lists the links' hrefs.
func hrefs(ls []Link) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Href
	}
	return out
}

// allHrefsIn reports whether every href is in set.
func allHrefsIn(hs []string, set map[string]bool) bool {
	for _, h := range hs {
		if !set[h] {
			return false
		}
	}
	return len(hs) > 0
}

// sameLinksLoosely reports whether the two lists are equal once each href
// is unescaped and its host lower-cased (the same link written twice).
func sameLinksLoosely(a, b []string) bool {
	loose := func(hs []string) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			if u, err := url.Parse(h); err == nil {
				u.Host = strings.ToLower(u.Host)
				h = u.String()
			}
			if un, err := url.PathUnescape(h); err == nil {
				h = un
			}
			out[i] = strings.TrimSuffix(h, "/")
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(loose(a), loose(b))
}

// classifyMeta names why the meta maps differ.
func classifyMeta(b, h map[string]string, src *Source) (string, string) {
	for k, bv := range b {
		hv, ok := h[k]
		if !ok {
			if src != nil && browserExtraClass(Tokens(bv), Tokens(bv), src) == ClassScript {
				return ClassScript, fmt.Sprintf("browser only %s=%q", k, short(bv, 60))
			}
			return ClassBrowserExtra, fmt.Sprintf("browser only %s=%q", k, short(bv, 60))
		}
		if bv != hv {
			c, d := classifyText(bv, hv, src, false)
			if c == "" {
				c = ClassWhitespace
			}
			return c, k + ": " + d
		}
	}
	for k, hv := range h {
		if _, ok := b[k]; !ok {
			return ClassHTTPExtra, fmt.Sprintf("http only %s=%q", k, short(hv, 60))
		}
	}
	return ClassOther, ""
}

// fieldText is a field value as text: a list joined by newlines, a
// missing value empty.
func fieldText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fieldText(e)
		}
		return strings.Join(parts, "\n")
	}
	return fmt.Sprint(v)
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nonNil makes a nil map compare equal to an empty one.
func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// local shows hrefs on the loopback corpus server by their path.
func local(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		if u, err := url.Parse(h); err == nil && u.Hostname() == "127.0.0.1" {
			u.Scheme, u.Host = "", ""
			h = u.String()
		}
		out[i] = h
	}
	return out
}
