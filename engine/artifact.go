package engine

import (
	"context"
	"encoding/base64"
	"errors"
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

// Artifact returns an artifact's metadata (name, type, size, expiry) so a
// download can set its headers before streaming. Errors:
// ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED.
func (e *Engine) Artifact(ctx context.Context, artifactID string) (*Artifact, error) {
	a, err := e.store.GetArtifact(ctx, artifactID)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ArtifactNotFound, "artifact %q does not exist", artifactID).WithDetails(map[string]any{"artifactId": artifactID})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "load artifact: %v", err)
	}
	if a.Expired || a.ExpiresAt <= e.now() {
		return nil, Errorf(ArtifactExpired, "artifact %q expired (artifactTtlMs %d)", artifactID, e.cfg.ArtifactTTL.Milliseconds()).
			WithDetails(map[string]any{"artifactId": artifactID, "expiredAt": a.ExpiresAt})
	}
	return a, nil
}

// ArtifactBytes returns up to length raw bytes of an artifact from offset
// (no text or base64 encoding), for downloads that stream the file in
// pieces. length <= 0 means artifactMaxChunkSize. Errors:
// ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, INVALID_PARAMETER.
func (e *Engine) ArtifactBytes(ctx context.Context, artifactID string, offset, length int64) ([]byte, error) {
	a, err := e.Artifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if offset < 0 || offset > a.Size {
		return nil, Errorf(InvalidParameter, "offset must be 0..%d, got %d", a.Size, offset)
	}
	if length <= 0 {
		length = e.cfg.ArtifactMaxChunkSize
	}
	b, err := e.store.ReadArtifact(ctx, ReadArtifactParams{ArtifactID: artifactID, Offset: offset, Length: length})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read artifact: %v", err)
	}
	return b, nil
}

// ReadArtifact returns one chunk of an artifact, encoded as get_artifact
// answers it (ArtifactEncodingRule). length <= 0 means
// artifactMaxChunkSize; larger values are clamped. Errors:
// ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, INVALID_PARAMETER (offset past the
// end or inside a UTF-8 character).
func (e *Engine) ReadArtifact(ctx context.Context, artifactID string, offset, length int64) (*ArtifactChunk, error) {
	a, err := e.Artifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, Errorf(InvalidParameter, "offset must be >= 0, got %d", offset)
	}
	if offset > a.Size {
		return nil, Errorf(InvalidParameter, "offset %d is past the end of the artifact (totalSize %d)", offset, a.Size)
	}
	maxLen := e.cfg.ArtifactMaxChunkSize
	if length <= 0 || length > maxLen {
		length = maxLen
	}
	chunk := &ArtifactChunk{ArtifactID: a.ID, MimeType: a.MimeType, TotalSize: a.Size, Offset: offset}
	if offset == a.Size {
		chunk.Complete = true
		return chunk, nil
	}
	text := IsTextMime(a.MimeType)
	want := length
	if text {
		want += 3 // room to finish a character that straddles the end
	}
	buf, err := e.store.ReadArtifact(ctx, ReadArtifactParams{ArtifactID: a.ID, Offset: offset, Length: want})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read artifact: %v", err)
	}
	if text {
		if len(buf) > 0 && isContinuation(buf[0]) {
			return nil, Errorf(InvalidParameter, "offset %d falls inside a UTF-8 character; continue from the previous chunk's offset+length", offset)
		}
		buf = textChunk(buf, int(length))
	} else if int64(len(buf)) > length {
		buf = buf[:length]
	}
	chunk.Length = int64(len(buf))
	chunk.Data = encodeChunk(a.MimeType, buf)
	chunk.Complete = offset+chunk.Length == a.Size
	return chunk, nil
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }
