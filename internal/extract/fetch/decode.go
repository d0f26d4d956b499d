package fetch

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// decodeBody decodes a response body to UTF-8 the way Chromium picks the
// encoding of a page: a byte order mark, else the charset of the
// Content-Type header, else (HTML only) a <meta charset> or <meta
// http-equiv="Content-Type"> found by metaCharset, else (HTML only) an
// XML declaration's encoding at the start (xmlDeclCharset), else
// windows-1252. Single-byte encodings decode by the Encoding Standard's
// indexes (decodeSingleByte).
// Labels follow the Encoding Standard (iso-8859-1 and us-ascii mean
// windows-1252, shift_jis and sjis mean Shift_JIS, …). Invalid bytes
// become U+FFFD. It returns the text and the encoding's name.
//
// Like Chromium, an undeclared page is not guessed to be UTF-8 even when
// it is valid UTF-8 (it reads as windows-1252, mojibake included, in both
// paths). Chromium also runs an encoding detector on undeclared pages,
// which may pick another legacy encoding (an undeclared Shift_JIS page);
// here those read as windows-1252.
func decodeBody(raw []byte, contentType string, isHTML bool) (string, string) {
	var enc encoding.Encoding
	name := ""
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		name = "utf-8"
	case bytes.HasPrefix(raw, []byte("\xfe\xff")):
		enc, name = charset.Lookup("utf-16be")
	case bytes.HasPrefix(raw, []byte("\xff\xfe")):
		enc, name = charset.Lookup("utf-16le")
	}
	if name == "" {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			if label, ok := params["charset"]; ok {
				enc, name = charset.Lookup(label)
			}
		}
	}
	if name == "" && isHTML {
		if label := metaCharset(raw); label != "" {
			enc, name = charset.Lookup(label)
			if strings.HasPrefix(name, "utf-16") || name == "x-user-defined" {
				// A page that declares UTF-16 in ASCII is not UTF-16.
				enc, name = nil, "utf-8"
			}
		}
	}
	if name == "" && isHTML {
		if label := xmlDeclCharset(raw); label != "" {
			enc, name = charset.Lookup(label)
			if strings.HasPrefix(name, "utf-16") || name == "x-user-defined" {
				enc, name = nil, "utf-8"
			}
		}
	}
	if name == "" {
		enc, name = charmap.Windows1252, "windows-1252"
	}
	if name == "utf-8" || enc == nil {
		return decodeUTF8(raw), "utf-8"
	}
	// charset.Lookup wraps the encoding; htmlindex gives the table itself.
	if e, err := htmlindex.Get(name); err == nil {
		if cm, ok := e.(*charmap.Charmap); ok {
			return decodeSingleByte(raw, cm), name
		}
	}
	out, _, err := transform.Bytes(unicode.BOMOverride(enc.NewDecoder()), raw)
	if err != nil {
		return decodeUTF8(raw), "utf-8"
	}
	return string(out), name
}

// bytesToCheckUnconditionally is how far metaCharset looks for a
// declaration even past the head.
const bytesToCheckUnconditionally = 1024

// headTags may appear in a <head> without ending metaCharset's search.
var headTags = map[string]bool{
	"script": true, "noscript": true, "style": true, "link": true, "meta": true,
	"object": true, "title": true, "base": true,
}

// metaCharset looks for a <meta charset> or <meta http-equiv=Content-Type
// content="…charset=…"> as Chromium does: tag by tag (the text of
// <title>, <script> and <style> skipped; the content of <noscript> read as
// tags, as Chromium's prescan, which runs without scripting, reads it: a
// <noscript><iframe> in the head ends the head there) through the head,
// whatever its length, and through the first 1024 bytes in any case; it
// stops at the first tag a head does not hold once 1024 bytes are read.
// It returns the declared label or "".
func metaCharset(raw []byte) string {
	z := html.NewTokenizer(bytes.NewReader(raw))
	inHead, read := true, 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return ""
		}
		read += len(z.Raw())
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken || tt == html.EndTagToken {
			name, hasAttr := z.TagName()
			tag := string(name)
			start := tt != html.EndTagToken
			if start && tag == "noscript" {
				z.NextIsNotRawText()
			}
			if start && tag == "meta" && hasAttr {
				if label := metaLabel(z); label != "" {
					return label
				}
			}
			if !headTags[tag] && !(start && (tag == "html" || tag == "head")) {
				inHead = false
			}
		}
		if !inHead && read >= bytesToCheckUnconditionally {
			return ""
		}
	}
}

// metaLabel returns the charset a <meta> tag declares, or "".
func metaLabel(z *html.Tokenizer) string {
	var cs, equiv, content string
	for {
		k, v, more := z.TagAttr()
		switch strings.ToLower(string(k)) {
		case "charset":
			if cs == "" {
				cs = strings.TrimSpace(string(v))
			}
		case "http-equiv":
			equiv = strings.ToLower(strings.TrimSpace(string(v)))
		case "content":
			content = string(v)
		}
		if !more {
			break
		}
	}
	if cs != "" {
		return cs
	}
	if equiv == "content-type" {
		return charsetFromContent(content)
	}
	return ""
}

// charsetFromContent is the HTML Standard's "extracting a character
// encoding from a meta element" on a content attribute.
func charsetFromContent(s string) string {
	lower := strings.ToLower(s)
	for i := 0; ; {
		j := strings.Index(lower[i:], "charset")
		if j < 0 {
			return ""
		}
		p := i + j + len("charset")
		for p < len(s) && isSpaceByte(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != '=' {
			i = p
			continue
		}
		p++
		for p < len(s) && isSpaceByte(s[p]) {
			p++
		}
		if p >= len(s) {
			return ""
		}
		if q := s[p]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[p+1:], q)
			if end < 0 {
				return ""
			}
			return s[p+1 : p+1+end]
		}
		end := p
		for end < len(s) && !isSpaceByte(s[end]) && s[end] != ';' {
			end++
		}
		return s[p:end]
	}
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// decodeUTF8 is the Encoding Standard's UTF-8 decode: a leading BOM is
// dropped and each maximal invalid subsequence becomes one U+FFFD (what a
// browser shows; Go's own conversion would give one U+FFFD per byte).
func decodeUTF8(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
			i++
			continue
		}
		var need int
		var cp rune
		lower, upper := byte(0x80), byte(0xbf)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need, cp = 1, rune(c&0x1f)
		case c >= 0xe0 && c <= 0xef:
			need, cp = 2, rune(c&0x0f)
			if c == 0xe0 {
				lower = 0xa0
			}
			if c == 0xed {
				upper = 0x9f
			}
		case c >= 0xf0 && c <= 0xf4:
			need, cp = 3, rune(c&0x07)
			if c == 0xf0 {
				lower = 0x90
			}
			if c == 0xf4 {
				upper = 0x8f
			}
		default:
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j, ok := i+1, true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				ok = false
				break
			}
			cp = cp<<6 | rune(b[j]&0x3f)
			lower, upper = 0x80, 0xbf
			j++
		}
		if !ok {
			// The bytes read so far are one error; the byte that broke
			// the sequence is read again on its own.
			sb.WriteRune(utf8.RuneError)
			i = j
			continue
		}
		sb.WriteRune(cp)
		i = j
	}
	return sb.String()
}

// mediaType returns the media type of a Content-Type value, lower case and
// without parameters ("" when there is none).
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// isHTMLType reports the media types a browser parses as HTML (XHTML is
// parsed as HTML here, which is close for well-formed documents).
func isHTMLType(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}
