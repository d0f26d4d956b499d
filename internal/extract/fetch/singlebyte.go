package fetch

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// decodeSingleByte decodes raw with the single-byte encoding cm as the
// Encoding Standard's index for it does, which is what Chromium shows.
// golang.org/x/text's tables leave some bytes of 0x80–0x9F undefined
// (U+FFFD): windows-1252's 0x81, 0x8D, 0x8F, 0x90 and 0x9D, all of
// 0x80–0x9F in the ISO-8859 family, windows-1250's 0x81, 0x83, 0x88, …
// The standard's indexes map every one of those bytes to the C1 control of
// the same value (0x9D → U+009D), so a saved page whose "”" lost a byte
// reads U+009D in the browser; here too. Bytes the standard leaves
// unmapped (above 0x9F in a few ISO-8859 and Windows code pages) stay
// U+FFFD in both.
func decodeSingleByte(raw []byte, cm *charmap.Charmap) string {
	var table [256]rune
	for b := range 256 {
		r := cm.DecodeByte(byte(b))
		if r == utf8.RuneError && b >= 0x80 && b <= 0x9f {
			r = rune(b)
		}
		table[b] = r
	}
	var sb strings.Builder
	sb.Grow(len(raw) + len(raw)/8)
	for _, c := range raw {
		if c < 0x80 {
			sb.WriteByte(c)
		} else {
			sb.WriteRune(table[c])
		}
	}
	return sb.String()
}

// xmlDeclCharset returns the encoding an XML declaration at the very start
// of an HTML page names (`<?xml version="1.0" encoding="UTF-8"?>`), or "".
// Chromium honours it for text/html when neither a byte order mark, the
// Content-Type header nor a <meta> declares one (checked with Chromium
// 156: a <meta charset> wins over it; a declaration after white space is
// not one). The HTML Standard's prescan does not read it; pages saved
// from XHTML sites carry it without a <meta>.
func xmlDeclCharset(raw []byte) string {
	if !bytes.HasPrefix(raw, []byte("<?xml")) {
		return ""
	}
	end := bytes.Index(raw, []byte("?>"))
	if end < 0 || end > 1024 {
		return ""
	}
	decl := string(raw[len("<?xml"):end])
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	q := rest[0]
	j := strings.IndexByte(rest[1:], q)
	if j < 0 {
		return ""
	}
	return rest[1 : 1+j]
}
