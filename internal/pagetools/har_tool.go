package pagetools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// network starts or stops the capture of the session page's traffic. Stop
// stores the capture as a HAR 1.2 artifact of the session (masked:
// maskHAR) and answers it with a resource link. One capture at a time;
// closing the session drops a capture never stopped.
func (t *Tools) network(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	switch a.Action {
	case "start":
		if p.files.har != nil {
			return nil, engine.Errorf(engine.InvalidParameter, "action: a capture is already running on this session; stop it first").
				WithDetails(map[string]any{"field": "action"})
		}
		c, err := startHAR(p.tab.Page(), a.Bodies)
		if err != nil {
			return nil, engine.Wrap(engine.ExecutionError, err, "watch the page's network: %v", err)
		}
		p.files.har = c
		b, _ := json.Marshal(map[string]any{"capturing": true, "bodies": a.Bodies})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "capturing the page's requests; call browser_network with action stop to get the HAR"}},
			StructuredContent: json.RawMessage(b)}, nil
	case "stop":
		c := p.files.har
		if c == nil {
			return nil, engine.Errorf(engine.InvalidParameter, "action: no capture is running on this session; start one with action start").
				WithDetails(map[string]any{"field": "action"})
		}
		p.files.har = nil
		entries := c.stop()
		arts, err := t.artifacts()
		if err != nil {
			return nil, err
		}
		doc := &harDoc{Log: harLog{Version: "1.2", Creator: harCreator{Name: "browsertask", Version: "1"}, Pages: []harPage{}, Entries: entries}}
		if c.dropped > 0 {
			doc.Log.Comment = fmt.Sprintf("%d more requests were not kept (at most %d entries)", c.dropped, maxHAREntries)
		}
		data, err := maskHAR(doc, p.files.secrets)
		if err != nil {
			return nil, engine.Wrap(engine.ExecutionError, err, "write the HAR: %v", err)
		}
		name := "network-" + c.started.UTC().Format("20060102T150405Z") + ".har"
		art, err := arts.PutSessionArtifact(ctx, a.SessionID, name, "application/json", data)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]any{"artifactId": art.ID, "name": art.Name, "mimeType": art.MimeType, "size": art.Size,
			"entries": len(entries), "dropped": c.dropped, "durationMs": time.Since(c.started).Milliseconds()})
		summary := fmt.Sprintf("captured %d requests as HAR artifact %s (%d bytes)", len(entries), art.ID, art.Size)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: summary}, &sdk.TextContent{Text: string(b)}, artifactLink(art)},
			StructuredContent: json.RawMessage(b)}, nil
	}
	return nil, engine.Errorf(engine.InvalidParameter, "action: %q is not start or stop", a.Action).WithDetails(map[string]any{"field": "action"})
}
