package structured

import (
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"1299.00", 1299},
		{"$1,299.00", 1299},
		{"1.299,00 €", 1299},
		{"1 299,00 €", 1299},
		{"1\u00a0299,50", 1299.5},
		{"CHF 1'299.50", 1299.5},
		{"$1,299", 1299},
		{"€1.299", 1299},
		{"1.299", 1.299}, // a bare machine number is read as written
		{"12,5", 12.5},
		{"0,125", 0.125},
		{"1.234.567", 1234567},
		{"1,234,567.89", 1234567.89},
		{"4.5 out of 5", 4.5},
		{"Rated 4 of 5", 4},
		{"1,234 reviews", 1234},
		{"-3", -3},
		{"−12,00 €", -12},
		{"1e3", 1000},
	}
	for _, c := range cases {
		got, err := parseNumber(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "free", "call us", "N/A"} {
		if got, err := parseNumber(bad); err == nil {
			t.Errorf("parseNumber(%q) = %v, want an error", bad, got)
		}
	}
}

func TestCoerceDates(t *testing.T) {
	date := &prop{typ: "string", format: "date"}
	dateTime := &prop{typ: "string", format: "date-time"}
	cases := []struct {
		p        *prop
		in, want string
	}{
		{date, "2024-03-05", "2024-03-05"},
		{date, "2024-03-05T23:30:00-05:00", "2024-03-05"}, // the date as written, not moved to UTC
		{date, "March 5, 2024", "2024-03-05"},
		{date, "5 March 2024", "2024-03-05"},
		{date, "Tue, 05 Mar 2024 10:00:00 GMT", "2024-03-05"},
		{date, "Published 2024-03-05 by Mia", "2024-03-05"},
		{dateTime, "2024-03-05T23:30:00-05:00", "2024-03-05T23:30:00-05:00"},
		{dateTime, "2024-03-05T23:30:00", "2024-03-05T23:30:00Z"}, // no zone: UTC
		{dateTime, "2024-03-05", "2024-03-05T00:00:00Z"},
	}
	for _, c := range cases {
		got, err := coerce(c.p, c.in, nil)
		if err != nil || got != c.want {
			t.Errorf("coerce(%s, %q) = %v, %v; want %q", c.p.format, c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"03/05/2024", "yesterday", "2024"} {
		if got, err := coerce(date, bad, nil); err == nil {
			t.Errorf("coerce(date, %q) = %v, want an error", bad, got)
		}
	}
}

func TestCoerceTypes(t *testing.T) {
	str := &prop{name: "availability", typ: "string"}
	enum := &prop{typ: "string", enum: []any{"InStock", "OutOfStock"}}
	integer := &prop{typ: "integer"}
	boolean := &prop{typ: "boolean"}
	number := &prop{typ: "number"}
	cases := []struct {
		p    *prop
		in   any
		want any
	}{
		{str, "  Trail \n Runner  ", "Trail Runner"},
		{str, "https://schema.org/InStock", "InStock"},
		{str, 42.0, "42"},
		{str, map[string]any{"@type": "Brand", "name": "Peak"}, "Peak"},
		{str, []any{"", "second"}, "second"},
		{enum, "in stock", "InStock"},
		{enum, "http://schema.org/OutOfStock", "OutOfStock"},
		{integer, "1,234", int64(1234)},
		{integer, 7.0, int64(7)},
		{boolean, "https://schema.org/InStock", true},
		{boolean, "Sold out", false},
		{boolean, "yes", true},
		{number, map[string]any{"@type": "AggregateRating", "ratingValue": "4.5"}, 4.5},
	}
	for _, c := range cases {
		got, err := coerce(c.p, c.in, nil)
		if err != nil || got != c.want {
			t.Errorf("coerce(%s, %#v) = %#v, %v; want %#v", c.p.typ, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		p  *prop
		in any
	}{
		{integer, "4.5"},
		{boolean, "maybe"},
		{number, true},
		{str, "   "},
		{number, map[string]any{"@type": "Thing"}},
	} {
		if got, err := coerce(c.p, c.in, nil); err == nil {
			t.Errorf("coerce(%s, %#v) = %#v, want an error", c.p.typ, c.in, got)
		}
	}
}

func TestRelativeURLs(t *testing.T) {
	page := parsedPage(t, `<html><head><base href="/shop/"></head></html>`, "https://x.example/a/b?q=1")
	got, err := coerce(&prop{name: "image", typ: "string"}, "img/1.png", page)
	if err != nil || got != "https://x.example/shop/img/1.png" {
		t.Errorf("image = %v, %v", got, err)
	}
	// A property that does not look like a link keeps the text.
	got, _ = coerce(&prop{name: "sku", typ: "string"}, "img/1.png", page)
	if got != "img/1.png" {
		t.Errorf("sku = %v", got)
	}
	if !strings.HasPrefix(page.URL(), "https://x.example/shop/") {
		t.Errorf("URL() = %q", page.URL())
	}
}
