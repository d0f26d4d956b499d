package engine

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// secretForms returns sec and the spellings a page, a URL or a JSON document
// may carry it in: a login form submitted with GET puts it in the URL
// form-urlencoded ("Pa+ss%40w0rd%21"), a page may echo it HTML-escaped or
// JSON-escaped. Every form is masked wherever the secret itself would be.
// Forms: application/x-www-form-urlencoded (WHATWG: space as "+", only
// alphanumerics and *-._ kept), Go's QueryEscape and PathEscape,
// JavaScript's encodeURIComponent, each with upper- and lower-case hex
// digits; JSON string escaping (with and without HTML-safe escapes); HTML
// entities; and the same form encodings of the bytes the secret becomes in
// every charset a browser submits forms in (secret_charsets.go), with
// characters that charset lacks as "&#NNNN;".
func secretForms(sec string) []string {
	forms := []string{sec}
	seen := map[string]bool{sec: true}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	for _, enc := range []string{
		percentEncode(sec, "*-._", true),       // HTML form submission
		percentEncode(sec, "-_.!~*'()", false), // encodeURIComponent
		url.QueryEscape(sec),
		url.PathEscape(sec),
	} {
		add(enc)
		add(lowerHex(enc))
	}
	// A form submitted in another charset (a windows-1252 or Shift_JIS
	// page): its bytes, form-urlencoded with either space spelling.
	for _, b := range append([]string{sec}, charsetSpellings(sec)...) {
		add(b)
		for _, enc := range []string{percentEncode(b, "*-._", true), percentEncode(b, "*-._", false)} {
			add(enc)
			add(lowerHex(enc))
		}
	}
	if b, err := json.Marshal(sec); err == nil {
		add(strings.Trim(string(b), `"`))
	}
	var sb strings.Builder
	e := json.NewEncoder(&sb)
	e.SetEscapeHTML(false)
	if e.Encode(sec) == nil {
		add(strings.Trim(strings.TrimSpace(sb.String()), `"`))
	}
	add(html.EscapeString(sec))
	return forms
}

// percentEncode escapes every byte of s except ASCII alphanumerics and the
// bytes in keep; spacePlus writes a space as "+".
func percentEncode(s, keep string, spacePlus bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && spacePlus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// lowerHex lower-cases the hex digits of every %XX escape in s.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = toLowerASCII(b[i+1])
			b[i+2] = toLowerASCII(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
