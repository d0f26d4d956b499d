package content

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// A UTF-8 page read as windows-1252 is repaired before extraction.
//
// A page that declares no encoding (no byte order mark, no charset in its
// Content-Type, no <meta charset>) is decoded as windows-1252, by the
// fetch path and by Chromium alike, even when its bytes are UTF-8: pages
// saved to disk lose the header that declared them, and some servers
// never send one. Its text then reads "fÃ¼r" for "für", which no reader
// and no model wants, and which matches nothing anybody searches for.
// go-trafilatura's own comparison script guesses the encoding (chardet)
// instead; a guess can also be wrong (it misreads some declared UTF-8
// pages there), so the repair here is narrow and decided on the whole
// document: the page is re-read as UTF-8 only when every one of its
// characters is one windows-1252 decodes to and the bytes they stand for
// are valid UTF-8 with at least one multi-byte sequence. A page truly in
// windows-1252 (or Latin-1) fails that test at its first accented letter
// followed by an ASCII one ("für" is f, 0xFC, r: no UTF-8), so it is
// never touched; a page that already holds any character outside
// windows-1252 (a correctly decoded UTF-8 page with "→", "ł" or "€"
// written as such next to another letter) is not either. Measured on
// go-trafilatura's comparison set (go run ./bench -only content): 17
// pages are read as windows-1252 over HTTP and in Chromium; the repair
// brings back their expected snippets (TestRepairMojibake).
//
// The browser path hands over the serialized DOM, where a no-break
// space is written "&nbsp;": the byte 0xA0 that ends the UTF-8 of "à"
// or "Р" arrives as that entity, so "&nbsp;" is read as 0xA0 where a
// UTF-8 sequence waits for it, and left as it is anywhere else.

// nbspEntity is how an HTML serializer writes U+00A0.
const nbspEntity = "&nbsp;"

// repairMojibake returns s re-read as UTF-8 and true when s is UTF-8 text
// decoded as windows-1252 throughout (see above), else s and false. A
// first pass only checks, so the usual page (whose first accented letter
// ends the check) costs no copy.
func repairMojibake(s string) (string, bool) {
	if !mojibakeBytes(s, nil) {
		return s, false
	}
	b := make([]byte, 0, len(s))
	mojibakeBytes(s, &b)
	if !utf8.Valid(b) {
		return s, false
	}
	return string(b), true
}

// mojibakeBytes walks s as windows-1252 characters standing for UTF-8
// bytes and reports whether they form UTF-8 sequences with at least one
// multi-byte one (overlong forms and surrogates are left to utf8.Valid);
// out, when not nil, receives the bytes.
func mojibakeBytes(s string, out *[]byte) bool {
	emit := func(c byte) {
		if out != nil {
			*out = append(*out, c)
		}
	}
	need := 0 // continuation bytes the current UTF-8 sequence still needs
	multi := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < utf8.RuneSelf {
			if need > 0 && strings.HasPrefix(s[i:], nbspEntity) {
				emit(0xA0)
				need--
				i += len(nbspEntity)
				continue
			}
			if need > 0 {
				return false
			}
			emit(byte(r))
			i += size
			continue
		}
		c, ok := windows1252Byte(r)
		if !ok {
			return false
		}
		switch {
		case need > 0:
			if c&0xC0 != 0x80 {
				return false
			}
			need--
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
		case c >= 0xF0 && c <= 0xF4:
			need = 3
		default:
			return false
		}
		multi = true
		emit(c)
		i += size
	}
	return need == 0 && multi
}

// windows1252Byte is the byte windows-1252 decodes to r, by the Encoding
// Standard's index: golang.org/x/text's table leaves 0x81, 0x8D, 0x8F,
// 0x90 and 0x9D undefined, which the standard (and Chromium) decode to
// the C1 control of the same value.
func windows1252Byte(r rune) (byte, bool) {
	switch r {
	case 0x81, 0x8D, 0x8F, 0x90, 0x9D:
		return byte(r), true
	}
	return charmap.Windows1252.EncodeRune(r)
}
