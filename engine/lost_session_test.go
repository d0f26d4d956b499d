package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// TestQueuedRunOfALostSessionFails: a run queued for a session whose
// process is gone (no owner row) can never be claimed; the recovery loop
// fails it with SESSION_NOT_FOUND and closes the session, so later
// submissions to it are refused at once instead of queuing forever.
func TestQueuedRunOfALostSessionFails(t *testing.T) {
	synctest.Test(t, testQueuedRunOfALostSessionFails)
}

func testQueuedRunOfALostSessionFails(t *testing.T) {
	h := newHarness(t, engine.Config{LeaseDuration: 300 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond,
		RecoveryInterval: 100 * time.Millisecond}, "")
	ctx := context.Background()
	now := time.Now().UnixMilli()
	if err := h.store.PutSession(ctx, engine.Session{ID: "sess_lost", OwnerID: "owner_gone", CreatedAt: now,
		LastUsedAt: now, ExpiresAt: now + 600_000}); err != nil {
		t.Fatal(err)
	}
	r := h.submit(`{"ms":1}`, func(s *engine.SubmitRequest) { s.SessionID = "sess_lost" })
	if r.Status != engine.StatusQueued || r.SessionID != "sess_lost" {
		t.Fatalf("submitted run: %+v", r)
	}
	got := h.wait(r.RunID)
	if got.Status != engine.StatusFailed || got.Error == nil || got.Error.Code != engine.SessionNotFound ||
		got.Error.Recovery == "" || got.FinishedAt == nil {
		t.Fatalf("run of a lost session: status %s error %+v", got.Status, got.Error)
	}
	if _, err := h.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", SessionID: "sess_lost",
		Inputs: []byte(`{"ms":1}`)}); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("submit to the lost session: %v, want SESSION_NOT_FOUND", err)
	}
	// A run without a session is unaffected.
	if free := h.wait(h.submit(`{"ms":1}`).RunID); free.Status != engine.StatusSucceeded {
		t.Fatalf("unbound run: %s %+v", free.Status, free.Error)
	}
}
