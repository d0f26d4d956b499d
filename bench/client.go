package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// client is one MCP client session (the go-sdk client, as an agent would
// use it) with small helpers for the tools the benchmark calls.
type client struct {
	cs *sdk.ClientSession
}

// connectHTTP opens a Streamable HTTP session to endpoint (…/mcp).
func connectHTTP(ctx context.Context, endpoint string) (*client, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "browsertask-bench", Version: "1"}, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", endpoint, err)
	}
	return &client{cs: cs}, nil
}

// connectStdio starts cmd and speaks MCP over its stdin/stdout.
func connectStdio(ctx context.Context, cmd *exec.Cmd) (*client, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "browsertask-bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect over stdio: %w", err)
	}
	return &client{cs: cs}, nil
}

// close ends the session.
func (c *client) close() { _ = c.cs.Close() }

// call calls a tool and decodes its structured content into out (may be
// nil). A tool error (isError) is returned as an error with its text.
func (c *client) call(ctx context.Context, name string, args any, out any) error {
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		return fmt.Errorf("%s: tool error %s", name, b)
	}
	if out == nil {
		return nil
	}
	// The text block carries the same JSON as structuredContent (contract):
	// decoding it once is cheaper than re-encoding the decoded map.
	// Blocks: a one-line summary, then the JSON (then links, images).
	if len(res.Content) >= 2 {
		if t, ok := res.Content[1].(*sdk.TextContent); ok {
			return json.Unmarshal([]byte(t.Text), out)
		}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return json.Unmarshal(b, out)
}

// runView is the part of a Run the benchmark reads.
type runView struct {
	RunID       string          `json:"runId"`
	Status      string          `json:"status"`
	Result      json.RawMessage `json:"result"`
	Error       json.RawMessage `json:"error"`
	ArtifactIDs []string        `json:"artifactIds"`
	CreatedAt   int64           `json:"createdAt"`
	StartedAt   *int64          `json:"startedAt"`
	FinishedAt  *int64          `json:"finishedAt"`
}

func (r *runView) terminal() bool {
	switch r.Status {
	case "succeeded", "failed", "partial_success", "canceled":
		return true
	}
	return false
}

// submitAsync starts a run in async mode and returns its id.
func (c *client) submitAsync(ctx context.Context, templateID string, inputs any) (string, error) {
	var h struct {
		RunID string `json:"runId"`
	}
	err := c.call(ctx, "run_task_template", map[string]any{
		"templateId": templateID, "inputs": inputs, "options": map[string]any{"mode": "async"},
	}, &h)
	return h.RunID, err
}

// waitRun polls get_task_run every poll until the run is terminal.
func (c *client) waitRun(ctx context.Context, runID string, poll time.Duration) (*runView, error) {
	for {
		var r runView
		if err := c.call(ctx, "get_task_run", map[string]any{"runId": runID}, &r); err != nil {
			return nil, err
		}
		if r.terminal() {
			return &r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// readArtifact reads a whole artifact with get_artifact, chunk by chunk,
// decoding base64 for binary types.
func (c *client) readArtifact(ctx context.Context, id string, text bool) ([]byte, error) {
	var out []byte
	var off int64
	for {
		var ch engine.ArtifactChunk
		if err := c.call(ctx, "get_artifact", map[string]any{"artifactId": id, "offset": off}, &ch); err != nil {
			return nil, err
		}
		if text {
			out = append(out, ch.Data...)
		} else {
			b, err := base64.StdEncoding.DecodeString(ch.Data)
			if err != nil {
				return nil, fmt.Errorf("artifact chunk at %d: %w", off, err)
			}
			out = append(out, b...)
		}
		off += ch.Length
		if ch.Complete {
			return out, nil
		}
		if ch.Length == 0 {
			return nil, fmt.Errorf("artifact %s: empty chunk at %d before the end", id, off)
		}
	}
}
