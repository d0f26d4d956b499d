package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) getArtifactTool() toolDef {
	return toolDef{
		name:  "get_artifact",
		title: "Read an artifact chunk",
		description: "Reads one chunk of an artifact a run produced (ids are in the run's artifactIds). offset and " +
			"length count bytes of the stored artifact; length defaults to artifactMaxChunkSize (256 KiB) and larger " +
			"values are clamped to it. " + engine.ArtifactEncodingRule + " " +
			"Read the whole artifact by calling again with offset = offset + length until complete is true. " +
			"An image that fits in one chunk also comes as an image content block. " +
			"Artifacts are kept for artifactTtlMs (default 24 h). Errors: ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, " +
			"INVALID_PARAMETER (offset past the end, or inside a UTF-8 character of a text artifact).",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"artifactId": str("The artifact to read."),
			"offset":     offsetInt("Byte offset to start at."),
			"length": map[string]any{"type": "integer", "minimum": 1,
				"description": "Bytes to read; default and maximum artifactMaxChunkSize."},
		}, "artifactId"),
		output: outputOf(object(map[string]any{
			"artifactId": str("The artifact."),
			"mimeType":   str("Its media type; decides whether data is text or base64."),
			"totalSize":  integer("Size of the stored artifact in bytes."),
			"offset":     integer("Byte offset of this chunk."),
			"length":     integer("Bytes in this chunk (may be less than asked)."),
			"data":       str("The chunk: UTF-8 text for text types, standard base64 otherwise."),
			"complete":   map[string]any{"type": "boolean", "description": "True when offset + length == totalSize."},
		}, "artifactId", "mimeType", "totalSize", "offset", "length", "data", "complete")),
		handle: s.getArtifact,
	}
}

// getArtifact answers one chunk.
func (s *Server) getArtifact(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a struct {
		ArtifactID string `json:"artifactId"`
		Offset     int64  `json:"offset"`
		Length     int64  `json:"length"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	// Length 0 (absent) asks the engine for artifactMaxChunkSize.
	chunk, err := s.eng.ReadArtifact(ctx, a.ArtifactID, a.Offset, a.Length)
	if err != nil {
		return s.errorResultLogged("get_artifact", err)
	}
	res := jsonResult(chunk, false)
	if chunk.Offset == 0 && chunk.Complete && isImage(chunk.MimeType) {
		// The whole image is in this chunk: also as an image a model can see.
		if img, err := base64.StdEncoding.DecodeString(chunk.Data); err == nil {
			res.Content = append(res.Content, &sdk.ImageContent{Data: img, MIMEType: chunk.MimeType})
		}
	}
	return res
}
