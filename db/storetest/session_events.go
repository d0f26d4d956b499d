package storetest

import (
	"reflect"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testSessionEvents: a session's events get gapless seqs from 1 with
// writers in two processes, read back whole and after a seq, in order;
// an unknown session is ErrNotFound; the events outlive the session's
// close.
func testSessionEvents(t *testing.T, nh func(t *testing.T) Harness) {
	h := nh(t)
	ctx := t.Context()
	handles := []engine.Store{h.Store, peer(t, h)}
	if err := h.Store.PutSession(ctx, engine.Session{ID: "sess_ev", OwnerID: "owner_a", CreatedAt: base, LastUsedAt: base, ExpiresAt: base + 60_000}); err != nil {
		t.Fatal(err)
	}
	first := engine.SessionEvent{SessionID: "sess_ev", At: base + 1, Tool: "browser_act", Tab: "t1", Action: "fill",
		Target: `e3 textbox "Password"`, Value: "••••••", URL: "http://127.0.0.1/login", Outcome: "ok", DurationMs: 12}
	if seq, err := h.Store.AppendSessionEvent(ctx, first); err != nil || seq != 1 {
		t.Fatalf("first AppendSessionEvent = %d, %v; want 1", seq, err)
	}
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := engine.SessionEvent{SessionID: "sess_ev", At: base + 2 + int64(i), Tool: "browser_snapshot", Outcome: "ok"}
				if _, err := handles[w%2].AppendSessionEvent(ctx, ev); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := h.Store.CloseSession(ctx, "sess_ev", base+100); err != nil {
		t.Fatal(err)
	}
	all, err := handles[1].ListSessionEvents(ctx, engine.ListSessionEventsParams{SessionID: "sess_ev"})
	if err != nil || len(all) != 1+writers*each {
		t.Fatalf("ListSessionEvents = %d events, %v; want %d", len(all), err, 1+writers*each)
	}
	for i, ev := range all {
		if ev.Seq != int64(i+1) || ev.SessionID != "sess_ev" {
			t.Fatalf("event %d: seq %d session %q; want seq %d of sess_ev", i, ev.Seq, ev.SessionID, i+1)
		}
	}
	first.Seq = 1
	if !reflect.DeepEqual(all[0], first) {
		t.Errorf("first event read back as %+v; want %+v", all[0], first)
	}
	page, err := h.Store.ListSessionEvents(ctx, engine.ListSessionEventsParams{SessionID: "sess_ev", AfterSeq: 38, Limit: 5})
	if err != nil || len(page) != 3 || page[0].Seq != 39 || page[2].Seq != 41 {
		t.Errorf("after 38, limit 5: %+v, %v; want seqs 39..41", page, err)
	}
	_, err = h.Store.AppendSessionEvent(ctx, engine.SessionEvent{SessionID: "sess_nope", Tool: "browser_act", Outcome: "ok"})
	checkErr(t, "AppendSessionEvent(unknown session)", err, engine.ErrNotFound)
	none, err := h.Store.ListSessionEvents(ctx, engine.ListSessionEventsParams{SessionID: "sess_nope"})
	if err != nil || len(none) != 0 {
		t.Errorf("ListSessionEvents(unknown) = %v, %v; want none", none, err)
	}
}
