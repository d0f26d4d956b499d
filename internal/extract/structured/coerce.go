package structured

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Coercion rules: how a value found on a page becomes the type the schema
// asks for.
//
//   - A structured value (a JSON-LD or microdata object) given where a
//     scalar is asked gives its first present key of "@value", "value",
//     "ratingValue", "price", "name", "url", "contentUrl", "@id" (a Brand
//     object gives its name, an ImageObject its url). A list gives its
//     first element that coerces.
//   - string: trimmed, white space collapsed. A schema.org enumeration IRI
//     ("https://schema.org/InStock") becomes its name ("InStock") unless
//     the property's format is a URI. With an enum, a value matching a
//     member after lowercasing and dropping non-alphanumerics ("in stock"
//     → "InStock") becomes that member. format "date" gives YYYY-MM-DD and
//     "date-time" RFC 3339 (see parseDate). A relative URL is made absolute
//     when the format is uri/iri/uri-reference or the property is named
//     like a link (url, image, link, href, logo, thumbnail…).
//   - number: see parseNumber ("$1,299.00" → 1299, "1.299,00 €" → 1299).
//     A text holding several numbers ("RFC 7159 (obsoletes RFC 4627)") is
//     refused with an *ambiguousError naming the text and the numbers,
//     never read as its first one (numbers.go).
//   - integer: a number with no fraction ("1,234 reviews" → 1234); 4.5 is
//     refused, not rounded.
//   - boolean: true/false, yes/no, on/off, 1/0, and stock words: InStock,
//     "in stock", available, LimitedAvailability, OnlineOnly, InStoreOnly,
//     PreOrder, PreSale, BackOrder → true; OutOfStock, "sold out",
//     Discontinued, unavailable, SoldOut → false.
//   - A property with no type keeps strings (trimmed) and other values.
//
// A value that cannot be coerced, or that then fails the property's own
// subschema (enum, pattern, minimum…), is passed over for the next source.

// scalarKeys are the keys an object found where a scalar is asked gives
// its value from, first present wins.
func scalarKeys() []string {
	return []string{"@value", "value", "ratingValue", "price", "name", "url", "contentUrl", "@id"}
}

// coerceDeep coerces v for p like coerce, and an object's properties and
// an array's items one by one (nulls are dropped, other keys kept); path
// names v in errors.
func coerceDeep(p *prop, v any, path string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		if p.typ != "object" || len(p.props) == 0 {
			break
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			if x == nil {
				continue
			}
			c := p.child(k)
			if c == nil {
				out[k] = x
				continue
			}
			cx, err := coerceDeep(c, x, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = cx
		}
		return out, nil
	case []any:
		if p.typ != "array" {
			break
		}
		out := make([]any, 0, len(t))
		for i, x := range t {
			if x == nil {
				continue
			}
			if p.items == nil {
				// No "items": any item is good, as given (Extract fills
				// such a list from an x-selector's matches too).
				out = append(out, x)
				continue
			}
			cx, err := coerceDeep(p.items, x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, cx)
		}
		return out, nil
	}
	out, err := coerce(p, v, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

// coerce converts v for property p; page (may be nil) resolves relative
// URLs.
func coerce(p *prop, v any, page *Page) (any, error) {
	switch t := v.(type) {
	case nil:
		return nil, errors.New("no value")
	case []any:
		var firstErr error
		for _, x := range t {
			out, err := coerce(p, x, page)
			if err == nil {
				return out, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if firstErr == nil {
			firstErr = errors.New("empty list")
		}
		return nil, firstErr
	case map[string]any:
		if p.typ == "object" || p.typ == "" {
			return t, nil
		}
		for _, k := range scalarKeys() {
			if x, ok := t[k]; ok {
				return coerce(p, x, page)
			}
		}
		return nil, errors.New("an object where a " + p.typ + " is asked")
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return nil, err
		}
		v = f
	case int:
		v = float64(t)
	case int64:
		v = float64(t)
	}
	switch p.typ {
	case "string":
		return coerceString(p, v, page)
	case "number":
		return coerceNumber(v)
	case "integer":
		f, err := coerceNumber(v)
		if err != nil {
			return nil, err
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("%v is not a whole number", f)
		}
		return int64(f), nil
	case "boolean":
		return coerceBool(v)
	case "":
		if s, ok := v.(string); ok {
			s = cleanText(s)
			if s == "" {
				return nil, errors.New("empty text")
			}
			return s, nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("a %s value where a %s is asked", jsonKind(v), p.typ)
}

// coerceString applies the string rules.
func coerceString(p *prop, v any, page *Page) (any, error) {
	var s string
	switch t := v.(type) {
	case string:
		s = cleanText(t)
	case float64:
		s = strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(t)
	default:
		return nil, fmt.Errorf("a %s value where a string is asked", jsonKind(v))
	}
	if s == "" {
		return nil, errors.New("empty text")
	}
	uriFormat := p.format == "uri" || p.format == "iri" || p.format == "uri-reference" || p.format == "iri-reference"
	switch p.format {
	case "date", "date-time":
		t, hasZone, err := parseDate(s)
		if err != nil {
			return nil, err
		}
		if p.format == "date" {
			return t.Format("2006-01-02"), nil
		}
		if !hasZone {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		}
		return t.Format(time.RFC3339), nil
	}
	if !uriFormat {
		if name, ok := schemaOrgEnum(s); ok {
			s = name
		}
	}
	if len(p.enum) > 0 {
		want := normKey(s)
		for _, e := range p.enum {
			if es, ok := e.(string); ok && normKey(es) == want {
				return es, nil
			}
		}
	}
	if (uriFormat || linkLike(p.name)) && page != nil && !strings.ContainsAny(s, " \t") {
		if abs := page.resolve(s); abs != "" {
			s = abs
		}
	}
	return s, nil
}

// linkLike reports whether a property name says it holds a URL.
func linkLike(name string) bool {
	switch normKey(name) {
	case "url", "link", "href", "image", "imageurl", "images", "photo", "picture", "thumbnail", "thumbnailurl",
		"logo", "canonical", "canonicalurl", "pageurl", "permalink", "mainimage", "icon", "src":
		return true
	}
	return false
}

// schemaOrgEnum shortens "https://schema.org/InStock" to "InStock".
func schemaOrgEnum(s string) (string, bool) {
	for _, pre := range []string{"https://schema.org/", "http://schema.org/"} {
		if rest, ok := strings.CutPrefix(s, pre); ok && rest != "" && !strings.ContainsAny(rest, "/?#") {
			return rest, true
		}
	}
	return "", false
}

// coerceNumber applies the number rules.
func coerceNumber(v any) (float64, error) {
	switch t := v.(type) {
	case float64:
		return t, nil
	case string:
		return parseNumber(t)
	}
	return 0, fmt.Errorf("a %s value where a number is asked", jsonKind(v))
}

// coerceBool applies the boolean rules.
func coerceBool(v any) (bool, error) {
	switch t := v.(type) {
	case bool:
		return t, nil
	case float64:
		if t == 0 || t == 1 {
			return t == 1, nil
		}
	case string:
		s := t
		if name, ok := schemaOrgEnum(strings.TrimSpace(s)); ok {
			s = name
		}
		switch normKey(s) {
		case "true", "yes", "y", "on", "1", "instock", "available", "limitedavailability", "onlineonly",
			"instoreonly", "preorder", "presale", "backorder":
			return true, nil
		case "false", "no", "n", "off", "0", "outofstock", "soldout", "discontinued", "unavailable",
			"notavailable":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not a yes/no value", v)
}

// parseDate reads a date or date-time written in a common way: ISO 8601 /
// RFC 3339 (with or without time, seconds, fraction or zone), RFC 1123
// (HTTP dates), "January 2, 2006", "Jan 2, 2006", "2 January 2006",
// "Monday, January 2, 2006", "2006/01/02". An ISO date inside longer text
// ("Published 2024-03-05 by…") is found too; a text holding two different
// ones ("published 2024-03-05, updated 2024-06-01") is an *ambiguousError.
// Slashed day/month orders (01/02/2006) are ambiguous and refused. hasZone
// says whether the text gave a time zone.
func parseDate(s string) (t time.Time, hasZone bool, err error) {
	s = strings.TrimSpace(s)
	zoned := []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 -0700", time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC}
	for _, l := range zoned {
		if t, err := time.Parse(l, s); err == nil {
			return t, true, nil
		}
	}
	plain := []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05",
		"2006-01-02 15:04", "2006-01-02", "2006/01/02", "January 2, 2006", "Jan 2, 2006", "Jan. 2, 2006",
		"2 January 2006", "2 Jan 2006", "02 Jan 2006", "Monday, January 2, 2006", "Mon, Jan 2, 2006", "January 2 2006",
		"2. January 2006"}
	for _, l := range plain {
		if t, err := time.Parse(l, s); err == nil {
			return t, false, nil
		}
	}
	iso := regexp.MustCompile(`\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?`)
	var found []string
	for _, m := range iso.FindAllString(s, -1) {
		if !slices.Contains(found, m) {
			found = append(found, m)
		}
	}
	switch {
	case len(found) > 1:
		return time.Time{}, false, &ambiguousError{what: "dates", text: cleanText(s), candidates: found}
	case len(found) == 1 && found[0] != s:
		return parseDate(found[0])
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date", clip(s, 40))
}
