package structured

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// ambiguousError says that a text asked for one value (a number, an
// integer, a date) holds several different ones. Reading the first would
// be a guess: "RFC 7159" in a section's text is not its count, and "9" of
// "9. Classes" is not the number a schema asked for. The caller names the
// property and suggests x-pattern (hints.go).
type ambiguousError struct {
	what       string   // "numbers" or "dates"
	text       string   // the text, whitespace collapsed
	candidates []string // the values as written, in text order, distinct
}

// Error names the text (an excerpt) and the candidates.
func (e *ambiguousError) Error() string {
	shown := e.candidates
	more := ""
	if len(shown) > 5 {
		more = fmt.Sprintf(" and %d more", len(shown)-5)
		shown = shown[:5]
	}
	return fmt.Sprintf("the text %q holds several %s (%s%s), so it gives none", clip(e.text, 80), e.what, strings.Join(shown, ", "), more)
}

// numberToken is one number as written in a text: its text, its value and
// its place (rune offsets).
type numberToken struct {
	text       string
	value      float64
	start, end int
}

// bareNumber is a number written as structured data writes it: '.' the
// decimal point, no grouping, maybe an exponent.
var bareNumber = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)

// ratingScale is what stands between a rating and its scale: "4.5 out of
// 5", "4 of 5", "8/10".
var ratingScale = regexp.MustCompile(`(?i)^\s*(out\s+of|of|/)\s*$`)

// parseNumber reads the one number a text holds:
//
//   - A bare machine number ("1299.00", "-3", "1.299", "1e3") is read as
//     written, with '.' as the decimal point: structured data writes
//     numbers this way.
//   - Otherwise each number written in the text is a candidate, and the
//     words and signs around it ("$", "€", "USD", "reviews") are ignored.
//     Spaces, no-break spaces and apostrophes group thousands only
//     between a first group of 1–3 digits and groups of exactly three
//     ("1 299", "10 000", "1'299"; "2024 100" is two numbers).
//   - With both '.' and ',' in one number, the one written last (once) is
//     the decimal separator ("1,299.00" → 1299, "1.299,00" → 1299).
//   - With one of them only: written more than once between groups of
//     three digits, it is grouping ("1.234.567"); written once with
//     exactly three digits after it and one to three digits before (not
//     "0"), it is grouping ("$1,299" → 1299, "€1.299" → 1299); else it is
//     the decimal separator ("12,5" → 12.5, "0,125" → 0.125). Separators
//     that fit none of these split the numbers ("3.12.1" is 3, 12 and 1;
//     "1, 2" is 1 and 2).
//   - A '-' or '−' right before the digits makes it negative unless a
//     letter or digit comes before the sign ("10-20" and "ECMA-404" hold
//     no negative number).
//   - A rating written against its scale is one value: a number after
//     "out of", "of" or "/" that is not smaller than the number before it
//     is that number's scale, not a candidate ("4.5 out of 5" → 4.5,
//     "8/10" → 8; "24/7" holds 24 and 7).
//
// The same value written twice is one candidate. No candidate is an
// error; several different ones an *ambiguousError naming them.
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if bareNumber.MatchString(s) {
		return strconv.ParseFloat(s, 64)
	}
	r := []rune(s)
	toks := numberTokens(r)
	var values []float64
	var written []string
	seen := map[float64]bool{}
	for i, t := range toks {
		if (i > 0 && isScale(r, toks[i-1], t)) || seen[t.value] {
			continue
		}
		seen[t.value] = true
		values = append(values, t.value)
		written = append(written, t.text)
	}
	switch len(values) {
	case 0:
		return 0, fmt.Errorf("no number in %q", clip(s, 40))
	case 1:
		return values[0], nil
	}
	return 0, &ambiguousError{what: "numbers", text: cleanText(s), candidates: written}
}

// isScale reports whether t is the scale of the rating prev ("out of 5").
func isScale(r []rune, prev, t numberToken) bool {
	if prev.end > t.start { // parts of one written number ("3.12.1")
		return false
	}
	return t.value >= prev.value && t.value > 0 && ratingScale.MatchString(string(r[prev.end:t.start]))
}

// numberTokens finds every number written in r, in order.
func numberTokens(r []rune) []numberToken {
	var out []numberToken
	for i := 0; i < len(r); {
		if !unicode.IsDigit(r[i]) {
			i++
			continue
		}
		start, neg := i, false
		if i > 0 && (r[i-1] == '-' || r[i-1] == '−') && (i < 2 || !isWordRune(r[i-2])) {
			start, neg = i-1, true
		}
		end := scanNumber(r, i)
		out = append(out, splitNumber(string(r[i:end]), start, end, neg)...)
		i = end
	}
	return out
}

// isWordRune reports whether r is a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isGroupSpace reports whether r groups thousands when written between
// digits: a space, a no-break or thin space, an apostrophe.
func isGroupSpace(r rune) bool {
	switch r {
	case ' ', '\u00a0', '\u202f', '\u2009', '\'', '’':
		return true
	}
	return false
}

// scanNumber returns where the number starting at r[i] (a digit) ends:
// digits, and '.' or ',' followed by a digit, and a grouping space
// between a first group of 1–3 digits and a group of exactly three.
func scanNumber(r []rune, i int) int {
	j := i
	lead, spaced := 0, false
	for j < len(r) && unicode.IsDigit(r[j]) {
		j++
		lead++
	}
	for j < len(r) {
		switch {
		case (r[j] == '.' || r[j] == ',') && j+1 < len(r) && unicode.IsDigit(r[j+1]):
			j++
		case isGroupSpace(r[j]) && (spaced || lead <= 3) && threeDigits(r, j+1):
			spaced = true
			j++
		default:
			return j
		}
		for j < len(r) && unicode.IsDigit(r[j]) {
			j++
		}
	}
	return j
}

// threeDigits reports whether r holds exactly three digits from i on.
func threeDigits(r []rune, i int) bool {
	if i+3 > len(r) {
		return false
	}
	for k := i; k < i+3; k++ {
		if !unicode.IsDigit(r[k]) {
			return false
		}
	}
	return i+3 == len(r) || !unicode.IsDigit(r[i+3])
}

// splitNumber reads one scanned number (digits with '.', ',' and grouping
// spaces; start and end its place, neg its sign) as one value, or as
// several when its separators fit no rule of parseNumber.
func splitNumber(text string, start, end int, neg bool) []numberToken {
	var d strings.Builder
	for _, c := range text {
		if unicode.IsDigit(c) || c == '.' || c == ',' {
			d.WriteRune(c)
		}
	}
	written := text
	if neg {
		written = "-" + text
	}
	if v, ok := readGrouped(d.String()); ok {
		if neg {
			v = -v
		}
		return []numberToken{{text: written, value: v, start: start, end: end}}
	}
	var out []numberToken
	for _, part := range strings.FieldsFunc(d.String(), func(c rune) bool { return c == '.' || c == ',' }) {
		v, err := strconv.ParseFloat(part, 64)
		if err == nil {
			out = append(out, numberToken{text: part, value: v, start: start, end: end})
		}
	}
	return out
}

// readGrouped reads digits with '.' and ',' by parseNumber's separator
// rules; ok is false when they fit none.
func readGrouped(d string) (float64, bool) {
	dots, commas := strings.Count(d, "."), strings.Count(d, ",")
	var norm string
	switch {
	case dots == 0 && commas == 0:
		norm = d
	case dots > 0 && commas > 0:
		dec, group := ".", ","
		if strings.LastIndex(d, ",") > strings.LastIndex(d, ".") {
			dec, group = ",", "."
		}
		if strings.Count(d, dec) != 1 {
			return 0, false
		}
		whole, frac, _ := strings.Cut(d, dec)
		if !groupsOfThree(strings.Split(whole, group)) {
			return 0, false
		}
		norm = strings.ReplaceAll(whole, group, "") + "." + frac
	default:
		sep := "."
		if commas > 0 {
			sep = ","
		}
		parts := strings.Split(d, sep)
		switch {
		case len(parts) > 2:
			if !groupsOfThree(parts) {
				return 0, false
			}
			norm = strings.Join(parts, "")
		case len(parts[1]) == 3 && len(parts[0]) <= 3 && parts[0] != "0":
			norm = parts[0] + parts[1]
		default:
			norm = parts[0] + "." + parts[1]
		}
	}
	v, err := strconv.ParseFloat(norm, 64)
	return v, err == nil
}

// groupsOfThree reports whether parts are thousands groups: a first of
// 1–3 digits, then exactly three each.
func groupsOfThree(parts []string) bool {
	if len(parts[0]) < 1 || len(parts[0]) > 3 {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) != 3 {
			return false
		}
	}
	return true
}
