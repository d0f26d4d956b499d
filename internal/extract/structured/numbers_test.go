package structured

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestNumberCandidates is the rule a number is read from a text by: one
// candidate gives it, several different ones are an *ambiguousError
// naming the text and every candidate as written, none is an error; and
// x-pattern's capture group is read by the same rule.
func TestNumberCandidates(t *testing.T) {
	one := []struct {
		in   string
		want float64
	}{
		{"RFC 7159", 7159},
		{"9. Classes", 9},
		{"Chapter 9 (9 pages)", 9}, // the same value twice is one candidate
		{"10 000 people", 10000},
		{"1 299,00 €", 1299},
		{"CHF 1'299.50", 1299.5},
		{"1,234,567.89", 1234567.89},
		{"1.234.567", 1234567},
		{"(-3)", -3},
		{"−12,00 €", -12},
		{"temperature -4.5 °C", -4.5},
		{"4.5 out of 5", 4.5},
		{"Rated 4 of 5", 4},
		{"8/10", 8},
		{"ECMA-404", 404}, // a '-' after a letter is no sign
	}
	for _, c := range one {
		got, err := parseNumber(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	several := []struct {
		in   string
		want []string
	}{
		{"json — JSON encoder and decoder. Specified by RFC 7159 (which obsoletes RFC 4627) and by ECMA-404", []string{"7159", "4627", "404"}},
		{"9. Classes 9.1. A Word About Names", []string{"9", "9.1"}},
		{"$19.99 - $29.99", []string{"19.99", "29.99"}},
		{"pages 10-20", []string{"10", "20"}},
		{"in 2024 100 people", []string{"2024", "100"}},
		{"Python 3.12.1", []string{"3", "12", "1"}},
		{"1, 2, 3, 4, 5, 6, 7", []string{"1", "2", "3", "4", "5", "6", "7"}},
		{"24/7", []string{"24", "7"}},
		{"-3 or -4", []string{"-3", "-4"}},
	}
	for _, c := range several {
		got, err := parseNumber(c.in)
		var amb *ambiguousError
		if !errors.As(err, &amb) || !reflect.DeepEqual(amb.candidates, c.want) {
			t.Errorf("parseNumber(%q) = %v, %v; want an ambiguousError with %q", c.in, got, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), "holds several numbers") || !strings.Contains(err.Error(), c.want[1]) {
			t.Errorf("parseNumber(%q): %q names neither the rule nor the candidates", c.in, err)
		}
	}
	long := "9. Classes " + strings.Repeat("word ", 40) + "RFC 7159 " + "1 2 3 4 5"
	_, err := parseNumber(long)
	if err == nil || !strings.Contains(err.Error(), `"9. Classes word`) || !strings.Contains(err.Error(), "(9, 7159, 1, 2, 3 and 2 more)") {
		t.Errorf("a long text: %v; want an 80-rune excerpt and 5 candidates then the count of the rest", err)
	}
	for _, none := range []string{"", "Classes", "N/A"} {
		if got, err := parseNumber(none); err == nil || errors.As(err, new(*ambiguousError)) {
			t.Errorf("parseNumber(%q) = %v, %v; want the no-number error", none, got, err)
		}
	}

	integer := &prop{typ: "integer", pattern: regexp.MustCompile(`RFC (\d+)`)}
	if v, err := patternValue(integer, "specified by RFC 7159 (obsoletes RFC 4627)"); err != nil || v != "7159" {
		t.Errorf("x-pattern hit = %q, %v; want the first match's group", v, err)
	} else if got, err := coerce(integer, v, nil); err != nil || got != int64(7159) {
		t.Errorf("coerce(%q) = %v, %v", v, got, err)
	}
	if v, err := patternValue(integer, "9. Classes"); err == nil || !strings.Contains(err.Error(), `"9. Classes"`) {
		t.Errorf("x-pattern miss = %q, %v; want an error naming the text", v, err)
	}
	wide := &prop{typ: "integer", pattern: regexp.MustCompile(`RFCs (.*)$`)}
	v, _ := patternValue(wide, "RFCs 7159 and 4627")
	if _, err := coerce(wide, v, nil); !errors.As(err, new(*ambiguousError)) {
		t.Errorf("a capture holding two numbers: %v; want an ambiguousError", err)
	}
}

// TestDateCandidates: a text with one ISO date gives it; two different
// ones are an *ambiguousError.
func TestDateCandidates(t *testing.T) {
	date := &prop{typ: "string", format: "date"}
	if got, err := coerce(date, "Published 2024-03-05, reviewed 2024-03-05", nil); err != nil || got != "2024-03-05" {
		t.Errorf("the same date twice = %v, %v", got, err)
	}
	_, err := coerce(date, "Published 2024-03-05, updated 2024-06-01", nil)
	var amb *ambiguousError
	if !errors.As(err, &amb) || !reflect.DeepEqual(amb.candidates, []string{"2024-03-05", "2024-06-01"}) || !strings.Contains(err.Error(), "several dates") {
		t.Errorf("two dates: %v; want an ambiguousError naming both", err)
	}
}

// FuzzParseNumber: parseNumber never panics on any text (it scans runes
// by index); a value it gives is finite or the bare-number reading, and an
// ambiguousError lists at least two different candidates, each a number
// parseNumber reads on its own.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"RFC 7159 (which obsoletes RFC 4627)", "9. Classes", "1 299,00 €", "−12,00", "4.5 out of 5",
		"24/7", "3.12.1", "1'299.50", "10 000 000", "-", "1,", ",5", "a-1-2", "8/ 10", "1\u202f234", "٣٤ and 12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseNumber(s)
		var amb *ambiguousError
		switch {
		case err == nil:
			if v != v && !bareNumber.MatchString(strings.TrimSpace(s)) {
				t.Fatalf("parseNumber(%q) = NaN", s)
			}
		case errors.As(err, &amb):
			if len(amb.candidates) < 2 {
				t.Fatalf("parseNumber(%q): ambiguous with %q", s, amb.candidates)
			}
			for _, c := range amb.candidates {
				if _, err := parseNumber(c); err != nil {
					t.Fatalf("parseNumber(%q): the candidate %q does not read alone: %v", s, c, err)
				}
			}
		}
	})
}
