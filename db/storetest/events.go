package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testEvents: a run's events get gapless seqs from 1 even with writers in
// several processes, and read back after a seq, a page at a time.
func testEvents(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("SeqContiguousAcrossHandles", func(t *testing.T) {
		h := nh(t)
		handles := []engine.Store{h.Store, peer(t, h)}
		mustCreate(t, handles[0], queuedRun("run_1", base))
		const writers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					data := json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))
					if err := handles[w%2].AppendEvent(t.Context(), "run_1", "log", data, base+int64(i)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		evs := events(t, handles[1], "run_1")
		if len(evs) != 1+writers*each {
			t.Fatalf("ListEvents = %d events, want %d", len(evs), 1+writers*each)
		}
		seen := map[[2]int]bool{}
		for i, e := range evs {
			if e.Seq != int64(i+1) || e.RunID != "run_1" {
				t.Fatalf("event %d has seq %d run %q; want seq %d (gapless from 1)", i, e.Seq, e.RunID, i+1)
			}
			if i == 0 {
				continue
			}
			var d struct{ W, I int }
			if err := json.Unmarshal(e.Data, &d); err != nil || e.Type != "log" {
				t.Fatalf("event %d = %s %s, %v", e.Seq, e.Type, e.Data, err)
			}
			seen[[2]int{d.W, d.I}] = true
		}
		if len(seen) != writers*each {
			t.Fatalf("%d distinct log events, want %d", len(seen), writers*each)
		}
	})

	t.Run("AfterSeqAndLimit", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		mustCreate(t, s, queuedRun("run_2", base))
		for i := range 20 {
			if err := s.AppendEvent(ctx, "run_1", "log", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), base+int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AppendEvent(ctx, "run_2", "progress", nil, base+5); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			after          int64
			limit          int
			first, n, last int64
		}{{0, 0, 1, 21, 21}, {10, 5, 11, 5, 15}, {18, 5, 19, 3, 21}, {21, 5, 0, 0, 0}, {0, 1, 1, 1, 1}, {-5, 2, 1, 2, 2}} {
			evs, err := s.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: c.after, Limit: c.limit})
			if err != nil || int64(len(evs)) != c.n {
				t.Fatalf("ListEvents(after %d, limit %d) = %d events, %v; want %d", c.after, c.limit, len(evs), err, c.n)
			}
			if c.n > 0 && (evs[0].Seq != c.first || evs[len(evs)-1].Seq != c.last) {
				t.Errorf("ListEvents(after %d, limit %d) = seqs %d..%d, want %d..%d",
					c.after, c.limit, evs[0].Seq, evs[len(evs)-1].Seq, c.first, c.last)
			}
		}
		evs, err := s.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: 1, Limit: 1})
		if err != nil || len(evs) != 1 || evs[0].Type != "log" || evs[0].At != base {
			t.Fatalf("event 2 = %+v, %v", evs, err)
		}
		checkJSON(t, "event 2 data", evs[0].Data, `{"i":0}`)
		// Seqs are per run, and an event without data has none.
		evs = events(t, s, "run_2")
		if len(evs) != 2 || evs[1].Seq != 2 || evs[1].Type != "progress" || len(evs[1].Data) != 0 {
			t.Fatalf("events of run_2 = %+v", evs)
		}
		checkErr(t, "AppendEvent(unknown run)", s.AppendEvent(ctx, "run_nope", "log", nil, base), engine.ErrNotFound)
	})
}
