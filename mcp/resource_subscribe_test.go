package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSubscribedRunResourceSendsUpdates(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	srv := NewServer(eng, ServerOptions{Version: "test"})
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	updates := make(chan string, 100)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("resources.subscribe not declared: %+v", caps.Resources)
	}

	sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: json.RawMessage(`{"items":3,"sleepMs":100}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	uri := runURIPrefix + sub.Run.RunID
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// Updates arrive until the resource reads as the ended run.
	n := 0
	for {
		if got := <-updates; got != uri {
			t.Fatalf("update for %q, want %q", got, uri)
		}
		n++
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		var r engine.Run
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &r); err != nil {
			t.Fatal(err)
		}
		if r.Status.Terminal() {
			if r.Status != engine.StatusSucceeded || n < 2 {
				t.Fatalf("ended %s after %d updates, want succeeded after at least 2 (progress, end)", r.Status, n)
			}
			break
		}
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// Only existing runs can be subscribed to (a 2026-07-28 client learns
	// it on its listen stream; the handler is what refuses).
	for _, bad := range []string{runURIPrefix + "run_missing", artifactURIPrefix + "art_x", "https://example.com/"} {
		if err := srv.subscribe(ctx, &sdk.SubscribeRequest{Params: &sdk.SubscribeParams{URI: bad}}); err == nil {
			t.Errorf("subscribe %s: no error", bad)
		}
	}
	// The watcher lets go on its own: when the run ended (after its last
	// update, which the client may read first) and when the subscription
	// ends — under 2026-07-28 Unsubscribe cancels the listen stream and
	// the server unsubscribes when it sees the cancellation, after
	// Unsubscribe returned. A watcher that never lets go fails here.
	fixture.WaitUntil(t, "no watchers left after the run ended and the client unsubscribed", func() bool {
		srv.watchers.mu.Lock()
		defer srv.watchers.mu.Unlock()
		return len(srv.watchers.byURI) == 0
	})
}
