package page

import (
	"sort"

	"github.com/andybalholm/cascadia"
)

// Field values are capped so that no page decides how large a result
// grows: an element's text repeats its descendants' text, so `all` over
// 300 nested <div>s around 1 MiB of text would otherwise give 300 MiB.
// The browser script applies the same rule with the same numbers
// (templates' extractJS), lengths in UTF-16 code units (JavaScript's
// String length) on both paths:
//
//   - one value is cut at MaxValueChars (never inside a surrogate pair);
//   - an `all` field keeps at most MaxValues values, and stops before
//     the value that would take its values past MaxFieldChars together;
//   - all fields of a page together stop at MaxPageFieldChars (fields
//     are taken in name order, so which field is cut is deterministic).
//
// A field cut by any of these is named in the page's FieldsCapped, never
// silently.
const (
	// DefaultMaxValueChars caps one value (as the page text is capped).
	DefaultMaxValueChars = 20000
	// DefaultMaxFieldChars caps the values of one `all` field together.
	DefaultMaxFieldChars = 50000
	// DefaultMaxValues caps the number of values of one `all` field.
	DefaultMaxValues = 1000
	// DefaultMaxPageFieldChars caps the values of all fields of one page.
	DefaultMaxPageFieldChars = 200000
)

// FieldCap says how a field's value was capped: Matches elements matched
// its selector, Kept values are in the result (for a field without all:
// 1), Cut of them were shortened to MaxValueChars.
type FieldCap struct {
	Matches int `json:"matches"`
	Kept    int `json:"kept"`
	Cut     int `json:"cut"`
}

// caps are the effective limits of one Extractor (zero options take the
// defaults).
type caps struct {
	value, field, values, page int
}

// capsOf returns o's limits, defaults for the ones left zero.
func capsOf(o Options) caps {
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return caps{value: pick(o.MaxValueChars, DefaultMaxValueChars), field: pick(o.MaxFieldChars, DefaultMaxFieldChars),
		values: pick(o.MaxValues, DefaultMaxValues), page: pick(o.MaxPageFieldChars, DefaultMaxPageFieldChars)}
}

// extractFields fills r.Fields (and r.FieldsCapped) from d, field names in
// sorted order sharing the page's budget.
func (e *Extractor) extractFields(d *Document, r *Result) {
	names := make([]string, 0, len(e.sels))
	for name := range e.sels {
		names = append(names, name)
	}
	sort.Strings(names)
	budget := e.caps.page
	for _, name := range names {
		v, c, used := d.cappedValue(e.sels[name], e.opts.Fields[name], e.caps, budget)
		budget -= used
		r.Fields[name] = v
		if c != nil {
			if r.FieldsCapped == nil {
				r.FieldsCapped = map[string]FieldCap{}
			}
			r.FieldsCapped[name] = *c
		}
	}
}

// cappedValue is field f's value under lim with budget characters left on
// the page: the value, its cap (nil when nothing was cut) and the
// characters it used.
func (d *Document) cappedValue(sel *Selector, f Field, lim caps, budget int) (any, *FieldCap, int) {
	if !f.All {
		el := cascadia.Query(d.root, sel.group)
		if el == nil {
			return nil, nil, 0
		}
		s, ok := d.value(el, f.Attr).(string)
		if !ok {
			return nil, nil, 0
		}
		n := utf16Len(s)
		if n <= lim.value && n <= budget {
			return s, nil, n
		}
		if n > lim.value {
			s = cutTextUTF16(s, lim.value)
			n = utf16Len(s)
		}
		if n > budget {
			return nil, &FieldCap{Matches: 1, Kept: 0, Cut: 0}, 0
		}
		return s, &FieldCap{Matches: 1, Kept: 1, Cut: 1}, n
	}
	matches := cascadia.QueryAll(d.root, sel.group)
	left := min(lim.field, budget)
	out := make([]any, 0, min(len(matches), lim.values))
	cut, used := 0, 0
	for _, el := range matches {
		if len(out) >= lim.values {
			break
		}
		v := d.value(el, f.Attr)
		if s, ok := v.(string); ok {
			n, shortened := utf16Len(s), false
			if n > lim.value {
				s = cutTextUTF16(s, lim.value)
				n, shortened, v = utf16Len(s), true, s
			}
			if used+n > left {
				break
			}
			used += n
			if shortened {
				cut++
			}
		}
		out = append(out, v)
	}
	if len(out) == len(matches) && cut == 0 {
		return out, nil, used
	}
	return out, &FieldCap{Matches: len(matches), Kept: len(out), Cut: cut}, used
}
