package pagetools

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameBytes bounds a file name kept for an upload or a download.
const maxNameBytes = 120

// fileName makes name (a download's suggested name, an artifact's or an
// uploaded path's base name: all chosen by a page or a client) safe as one
// file name on any disk: only its last path element, letters and digits
// of any script, and . - _ ( ) + kept, everything else (separators,
// controls, quotes, spaces) as "_", no leading dot, at most maxNameBytes
// bytes with the extension kept. An empty result is fallback.
func fileName(name, fallback string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError:
			b.WriteByte('_')
		case unicode.IsLetter(r), unicode.IsDigit(r), strings.ContainsRune(".-_()+", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if len(s) > maxNameBytes {
		ext := path.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		stem := s[:maxNameBytes-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		s = stem + ext
	}
	if strings.Trim(s, "_") == "" {
		return fallback
	}
	return s
}
