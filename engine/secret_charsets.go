package engine

import (
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
)

// formCharsets are the encodings a browser submits a form in (WHATWG
// Encoding Standard: a form is submitted in its page's charset, or its
// accept-charset), UTF-8 aside, which secretForms covers already. UTF-16
// pages submit UTF-8, and "replacement" and x-user-defined never encode
// a form, so they are left out. ISO-8859-1 and US-ASCII are labels of
// windows-1252 here, as in every browser.
var formCharsets = []string{
	"ibm866", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5",
	"iso-8859-6", "iso-8859-7", "iso-8859-8", "iso-8859-8-i", "iso-8859-10",
	"iso-8859-13", "iso-8859-14", "iso-8859-15", "iso-8859-16", "koi8-r",
	"koi8-u", "macintosh", "windows-874", "windows-1250", "windows-1251",
	"windows-1252", "windows-1253", "windows-1254", "windows-1255",
	"windows-1256", "windows-1257", "windows-1258", "x-mac-cyrillic",
	"gbk", "gb18030", "big5", "euc-jp", "iso-2022-jp", "shift_jis", "euc-kr",
}

// charsetSpellings returns the byte strings sec becomes when a form in
// one of formCharsets submits it, each once, UTF-8's own excluded: a
// character the charset lacks is sent as a decimal character reference
// ("&#8364;"), as browsers do, so a secret is masked in whatever page
// charset a run met without the masker having to know the page.
func charsetSpellings(sec string) []string {
	var out []string
	seen := map[string]bool{sec: true}
	for _, name := range formCharsets {
		enc, err := htmlindex.Get(name)
		if err != nil {
			continue
		}
		b, err := encoding.HTMLEscapeUnsupported(enc.NewEncoder()).String(sec)
		if err != nil || seen[b] {
			continue
		}
		seen[b] = true
		out = append(out, b)
	}
	return out
}
