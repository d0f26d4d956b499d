package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResourceTemplates(t *testing.T) {
	cfg := taskTestConfig()
	cfg.ArtifactMaxChunkSize = 1000
	eng := newEngine(t, cfg)
	srv := NewServer(eng, ServerOptions{Version: "test"})
	if srv.resourceMax != MaxResourceArtifactBytes {
		t.Fatalf("resource limit %d, want 8 MiB", srv.resourceMax)
	}
	// Small sizes keep the test fast under -race; the logic is the same.
	const limit = 4000
	srv.resourceMax = limit
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })

	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]bool{}
	for _, rt := range tl.ResourceTemplates {
		uris[rt.URITemplate] = true
	}
	if len(uris) != 2 || !uris["browsertask://runs/{runId}"] || !uris["browsertask://artifacts/{artifactId}"] {
		t.Fatalf("resource templates = %v", uris)
	}

	finished := func(inputs string) *engine.Run {
		t.Helper()
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync})
		if err != nil {
			t.Fatal(err)
		}
		run, err := eng.Wait(ctx, sub.Run.RunID, nil)
		if err != nil || run.Status != engine.StatusSucceeded {
			t.Fatalf("run %v: %v", run, err)
		}
		return run
	}
	read := func(uri string) *sdk.ResourceContents {
		t.Helper()
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, res.Contents)
		}
		return res.Contents[0]
	}

	text := finished(`{"items":1,"content":"héllo","mimeType":"text/plain"}`)
	c := read("browsertask://runs/" + text.RunID)
	var run map[string]any
	if err := json.Unmarshal([]byte(c.Text), &run); err != nil || c.MIMEType != "application/json" ||
		run["runId"] != text.RunID || run["status"] != "succeeded" {
		t.Fatalf("run resource: %s %q (%v)", c.MIMEType, c.Text, err)
	}
	c = read("browsertask://artifacts/" + text.ArtifactIDs[0])
	if c.Text != "héllo" || c.MIMEType != "text/plain" {
		t.Fatalf("text artifact: %+v", c)
	}

	bin := []byte{0, 1, 2, 250, 251, 252}
	blob := finished(`{"items":1,"contentBase64":"` + base64.StdEncoding.EncodeToString(bin) + `","mimeType":"application/octet-stream"}`)
	c = read("browsertask://artifacts/" + blob.ArtifactIDs[0])
	if string(c.Blob) != string(bin) || c.Text != "" {
		t.Fatalf("binary artifact: %+v", c)
	}

	// More than the resource limit: a pointer to get_artifact.
	big := finished(`{"items":1,"content":"` + strings.Repeat("x", limit*3/2) + `","mimeType":"text/plain"}`)
	c = read("browsertask://artifacts/" + big.ArtifactIDs[0])
	var ptr map[string]any
	if err := json.Unmarshal([]byte(c.Text), &ptr); err != nil || ptr["totalSize"] != float64(limit*3/2) ||
		!strings.Contains(ptr["message"].(string), "get_artifact") {
		t.Fatalf("large artifact pointer: %q (%v)", c.Text, err)
	}
	// At the limit: served whole although it spans several engine chunks.
	whole := finished(`{"items":1,"content":"` + strings.Repeat("é", limit/2) + `","mimeType":"text/plain"}`)
	if c = read("browsertask://artifacts/" + whole.ArtifactIDs[0]); c.Text != strings.Repeat("é", limit/2) {
		t.Fatalf("1 MiB artifact: %d bytes", len(c.Text))
	}

	for _, uri := range []string{"browsertask://runs/run_nope", "browsertask://artifacts/art_nope"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("read %s: want resource-not-found, got %v", uri, err)
		}
	}
}
