package templates

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// What a sample of render "auto" teaches. The HTTP page and the browser's
// page of one URL are compared (fields, title, final URL, and the links
// when they are extracted), and each difference is attributed to its
// cause:
//
//   - JavaScript: the browser shows something the HTML does not have —
//     a field, a list item, a title, a link, text in an element or a
//     final URL only the browser has, or text of its own in place of the
//     HTML's ("…" became "3.50"). Only this moves pages to the browser:
//     the sample's whole group, with a reason naming the page and what
//     differed.
//   - A text rule of ours: both pages have the element, and all the
//     browser shows of it is in the HTML's text, in order, whitespace and
//     letter case aside ("Python Setup and Usage¶" over HTTP, "Python
//     Setup and Usage" in the browser: text the page's CSS hides, a
//     text-transform). The browser's value is the right one, but a script
//     would not fix it: the HTTP path's text rule must. The group stays
//     over HTTP and the sample says so in its renderReason ("sample: text
//     differs by a text rule, not JavaScript (h1)"), so these pages can
//     be counted in pages.json.
//
// The rule trusts that a script adds to a page rather than removes from
// it: a script that only deletes text (a "Loading…" it clears) is read as
// a text rule.

// Render reasons (renderReason) of render "auto".
const (
	reasonSample = "sample"
	// reasonTextRule starts the reason of a sample whose only
	// differences are text rules; the field names and ")" follow.
	reasonTextRule = "sample: text differs by a text rule, not JavaScript ("
	// reasonGroup + group prefix + reasonNeedsJS + page + ": " + what
	// differs is the reason of every page of a switched group
	// ("group /library/ needs JavaScript: /library/json.html: fields
	// differ (h2s)"); restore recognises a switched group by it.
	reasonGroup   = "group "
	reasonNeedsJS = " needs JavaScript: "
	// reasonShell starts the reason of a page whose own HTML is an
	// application shell (it alone goes to the browser).
	reasonShell = "app shell: "
	// reasonChecked: no requested field in the HTML, none in the browser
	// either.
	reasonChecked = "checked: no field in the HTML"
)

// switchesGroup reports whether a checkpointed page's renderReason
// switched its group to the browser.
func switchesGroup(reason string) bool {
	return strings.HasPrefix(reason, reasonGroup) && strings.Contains(reason, reasonNeedsJS)
}

// agreed reports whether a checkpointed page's renderReason is a sample
// that showed nothing only JavaScript explains.
func agreed(reason string) bool {
	return reason == reasonSample || strings.HasPrefix(reason, reasonTextRule) ||
		reason == reasonChecked || strings.HasPrefix(reason, reasonShell)
}

// groupReason is the reason group g goes to the browser: the sample at
// pageURL showed what (e.g. "fields differ (price)").
func groupReason(g *autoGroup, pageURL, what string) string {
	where := pageURL
	if u, err := url.Parse(pageURL); err == nil {
		where = u.RequestURI()
	}
	return reasonGroup + g.prefix + reasonNeedsJS + where + ": " + what
}

// sampleEvidence is what one sample showed: js, the differences only
// JavaScript explains ("fields differ (price)", "title differs", …);
// textRule, the fields (and "title") whose text differs by a text rule.
type sampleEvidence struct {
	js       []string
	textRule []string
}

// textRuleReason is the renderReason of a sample whose only differences
// are text rules, or reasonSample when there were none.
func (e sampleEvidence) textRuleReason() string {
	if len(e.textRule) == 0 {
		return reasonSample
	}
	return reasonTextRule + strings.Join(capNames(e.textRule), ", ") + ")"
}

// capNames keeps the first five names, then "…".
func capNames(names []string) []string {
	if len(names) > 5 {
		return append(names[:5:5], "…")
	}
	return names
}

// evidence compares the HTTP page h with the browser's page b.
func (a *autoRender) evidence(h, b *pageOut) sampleEvidence {
	var e sampleEvidence
	var jsFields []string
	for _, name := range page.DifferentFields(h.Fields, b.Fields) {
		if textRuleOnly(h.Fields[name], b.Fields[name]) {
			e.textRule = append(e.textRule, name)
		} else {
			jsFields = append(jsFields, name)
		}
	}
	if len(jsFields) > 0 {
		e.js = append(e.js, "fields differ ("+strings.Join(capNames(jsFields), ", ")+")")
	}
	if h.Title != b.Title {
		if hiddenOnly(h.Title, b.Title) {
			e.textRule = append(e.textRule, "title")
		} else {
			e.js = append(e.js, "title differs")
		}
	}
	if h.FinalURL != b.FinalURL {
		e.js = append(e.js, "final URL differs")
	}
	if a.links && !sameLinkTargets(h.Links, b.Links) {
		e.js = append(e.js, "links differ")
	}
	if a.markdown && h.Markdown != b.Markdown {
		// The fields' rule: all the browser's Markdown in the HTML's,
		// in order, whitespace and case aside, is a text rule.
		if hiddenOnly(h.Markdown, b.Markdown) {
			e.textRule = append(e.textRule, "markdown")
		} else {
			e.js = append(e.js, "markdown differs")
		}
	}
	return e
}

// textRuleOnly reports whether the field values hv (HTTP) and bv (the
// browser) differ only by a text rule: two strings where hiddenOnly
// holds, or two lists of the same length whose items do pairwise. A
// value one side lacks (nil) is a difference JavaScript explains.
func textRuleOnly(hv, bv any) bool {
	hv, bv = plainJSON(hv), plainJSON(bv)
	switch hv := hv.(type) {
	case string:
		bs, ok := bv.(string)
		return ok && hiddenOnly(hv, bs)
	case []any:
		bl, ok := bv.([]any)
		if !ok || len(bl) != len(hv) {
			return false
		}
		for i := range hv {
			if !sameValueJSON(hv[i], bl[i]) && !textRuleOnly(hv[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// plainJSON is v as encoding/json decodes it (strings, []any, nil), so
// []string and []any compare alike.
func plainJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return v
	}
	return out
}

// sameValueJSON reports whether a and b have the same JSON form.
func sameValueJSON(a, b any) bool {
	return len(page.DifferentFields(map[string]any{"v": a}, map[string]any{"v": b})) == 0
}

// hiddenOnly reports whether everything the browser shows (b) is in the
// HTML's text (h) in the same order, whitespace and letter case aside:
// the HTML only has more (text the page's CSS hides), never other text.
func hiddenOnly(h, b string) bool {
	hr, br := folded(h), folded(b)
	i := 0
	for _, r := range hr {
		if i < len(br) && br[i] == r {
			i++
		}
	}
	return i == len(br)
}

// folded is s in lower case without whitespace.
func folded(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if !unicode.IsSpace(r) {
			out = append(out, unicode.ToLower(r))
		}
	}
	return out
}
