package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource templates: runs and small artifacts are
// readable as MCP resources, for clients that attach resources to a
// conversation rather than call tools.

// Resource URI prefixes.
const (
	runURIPrefix      = "browsertask://runs/"
	artifactURIPrefix = "browsertask://artifacts/"
)

// MaxResourceArtifactBytes is the largest artifact served whole as a
// resource (8 MiB); larger ones answer a pointer to get_artifact. A client
// reads a resource because it chose to, outside any answer budget, so the
// limit only bounds the memory one read takes: pages.md of a 1000-page
// Markdown crawl (about 1.2 MB) reads whole.
const MaxResourceArtifactBytes = 8 << 20

// addResources registers the two resource templates.
func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "run",
		Title:       "Run",
		URITemplate: runURIPrefix + "{runId}",
		MIMEType:    "application/json",
		Description: "A run (= a task) as get_task_run returns it: status, progress, result or error, artifactIds.",
	}, s.readRunResource)
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "artifact",
		Title:       "Artifact",
		URITemplate: artifactURIPrefix + "{artifactId}",
		Description: fmt.Sprintf("The bytes of an artifact a run produced (text for text types, a blob otherwise), "+
			"for artifacts up to %d bytes; a larger one answers a JSON pointer telling to read it with get_artifact.",
			MaxResourceArtifactBytes),
	}, s.readArtifactResource)
}

// readRunResource serves browsertask://runs/{runId}. Errors: the SDK's
// resource-not-found error for unknown or expired runs.
func (s *Server) readRunResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, runURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	run, err := s.eng.Get(ctx, id)
	if engine.CodeOf(err) == engine.RunNotFound {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, errInternal(err)
	}
	b, err := json.Marshal(run)
	if err != nil {
		return nil, errInternal(err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// readArtifactResource serves browsertask://artifacts/{artifactId}: the
// whole artifact when it is at most MaxResourceArtifactBytes, read chunk by chunk through the
// engine; else a JSON pointer to get_artifact. Errors: resource-not-found
// for unknown or expired artifacts.
func (s *Server) readArtifactResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, artifactURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	chunk, err := s.eng.ReadArtifact(ctx, id, 0, 0)
	if err != nil {
		return nil, artifactResourceError(uri, err)
	}
	if chunk.TotalSize > s.resourceMax {
		b, _ := json.Marshal(map[string]any{
			"artifactId": id, "mimeType": chunk.MimeType, "totalSize": chunk.TotalSize,
			"message": fmt.Sprintf("The artifact is %d bytes, more than the %d bytes served as a resource; "+
				"read it in chunks with the get_artifact tool (artifactId %s, offset 0, then offset+length until complete).",
				chunk.TotalSize, s.resourceMax, id),
		})
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	text := engine.IsTextMime(chunk.MimeType)
	var buf strings.Builder
	for {
		if err := appendChunk(&buf, chunk, text); err != nil {
			return nil, errInternal(err)
		}
		if chunk.Complete || chunk.Length == 0 {
			break
		}
		if chunk, err = s.eng.ReadArtifact(ctx, id, chunk.Offset+chunk.Length, 0); err != nil {
			return nil, artifactResourceError(uri, err)
		}
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: chunk.MimeType}
	if text {
		c.Text = buf.String()
	} else {
		c.Blob = []byte(buf.String())
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// appendChunk adds a chunk's bytes (decoding base64 for binary types).
func appendChunk(buf *strings.Builder, c *engine.ArtifactChunk, text bool) error {
	if text {
		buf.WriteString(c.Data)
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return fmt.Errorf("artifact %s chunk at %d: %w", c.ArtifactID, c.Offset, err)
	}
	buf.Write(b)
	return nil
}

// artifactResourceError maps ReadArtifact errors for resources/read.
func artifactResourceError(uri string, err error) error {
	e := engine.AsError(err)
	switch e.Code {
	case engine.ArtifactNotFound, engine.ArtifactExpired:
		data, _ := json.Marshal(map[string]any{"uri": uri, "errorCode": e.Code, "message": e.Message, "recovery": e.Recovery})
		// -32602 since SEP-2164 (the SDK's deprecated CodeResourceNotFound has the same value).
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + e.Message, Data: data}
	}
	return errInternal(err)
}
