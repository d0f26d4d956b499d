package engine

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// ArtifactChunk is get_artifact's answer (frozen field set).
type ArtifactChunk struct {
	ArtifactID string `json:"artifactId"`
	MimeType   string `json:"mimeType"`
	TotalSize  int64  `json:"totalSize"`
	Offset     int64  `json:"offset"`
	Length     int64  `json:"length"`
	Data       string `json:"data"`
	Complete   bool   `json:"complete"`
}

// TextMimeTypes are the non text/* types whose chunks are UTF-8 strings.
var TextMimeTypes = []string{"application/json", "application/x-ndjson", "application/xml", "image/svg+xml"}

// ArtifactEncodingRule documents how get_artifact encodes data.
const ArtifactEncodingRule = "text/*, application/json, application/x-ndjson, application/xml and image/svg+xml chunks are UTF-8 strings that never split a character (a chunk may be shorter than length; continue at offset+length); every other type is standard base64 of the bytes."

// IsTextMime reports whether chunks of this type are sent as UTF-8 text.
func IsTextMime(mime string) bool {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	if strings.HasPrefix(m, "text/") {
		return true
	}
	for _, t := range TextMimeTypes {
		if m == t {
			return true
		}
	}
	return false
}

// textChunk trims buf (bytes read from offset, possibly a few more than
// want) to at most want bytes ending on a character boundary, but always
// keeps at least one whole character. It returns the kept prefix.
func textChunk(buf []byte, want int) []byte {
	if len(buf) <= want {
		// Everything left fits, but the read may have ended mid-character
		// only if the stored bytes are not UTF-8; keep them as they are.
		return buf
	}
	end := want
	// Move end back to the start of a character.
	for end > 0 && !utf8.RuneStart(buf[end]) {
		end--
	}
	if end == 0 {
		// The first character is longer than want: keep it whole.
		_, size := utf8.DecodeRune(buf)
		if size < 1 {
			size = 1
		}
		return buf[:size]
	}
	return buf[:end]
}

// encodeChunk returns the data string for a chunk of the given type.
func encodeChunk(mime string, b []byte) string {
	if IsTextMime(mime) {
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}
