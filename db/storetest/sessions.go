package storetest

import (
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testSessions: browser session rows are upserted, listed while open,
// touched while open, and closed once (closing again is a no-op).
func testSessions(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("PutGetReplace", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		want := engine.Session{ID: "sess_1", OwnerID: "owner_a", CreatedAt: base + 10, LastUsedAt: base + 20, ExpiresAt: base + 30}
		if err := s.PutSession(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetSession(ctx, "sess_1")
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("GetSession = %+v, %v; want %+v", got, err, want)
		}
		want.LastUsedAt, want.OwnerID = base+25, "owner_b"
		if err := s.PutSession(ctx, want); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetSession(ctx, "sess_1"); err != nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("GetSession after a second put = %+v, %v; want %+v", got, err, want)
		}
		_, err = s.GetSession(ctx, "sess_nope")
		checkErr(t, "GetSession(unknown)", err, engine.ErrNotFound)
	})

	t.Run("CloseIsIdempotent", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		if err := s.PutSession(ctx, engine.Session{ID: "sess_1", OwnerID: "o", CreatedAt: base, LastUsedAt: base, ExpiresAt: base + 100}); err != nil {
			t.Fatal(err)
		}
		// Closing again succeeds and keeps the first closedAt.
		want := engine.Session{ID: "sess_1", OwnerID: "o", CreatedAt: base, LastUsedAt: base, ExpiresAt: base + 100, ClosedAt: ptr(base + 40)}
		for _, now := range []int64{base + 40, base + 50} {
			got, err := s.CloseSession(ctx, "sess_1", now)
			if err != nil || got == nil || !reflect.DeepEqual(*got, want) {
				t.Fatalf("CloseSession at %d = %+v, %v; want %+v", now-base, got, err, want)
			}
		}
		_, err := s.GetSession(ctx, "sess_1")
		checkErr(t, "GetSession(closed)", err, engine.ErrNotFound)
		if open, err := s.ListSessions(ctx, ""); err != nil || len(open) != 0 {
			t.Fatalf("ListSessions after close = %+v, %v; want none", open, err)
		}
		_, err = s.CloseSession(ctx, "sess_nope", base)
		checkErr(t, "CloseSession(unknown)", err, engine.ErrNotFound)
	})

	t.Run("ListOpenNewestFirstByOwner", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for i, id := range []string{"sess_a", "sess_b", "sess_c", "sess_d"} {
			owner := "own_1"
			if id == "sess_c" {
				owner = "own_2"
			}
			if err := s.PutSession(ctx, engine.Session{ID: id, OwnerID: owner, CreatedAt: base + int64(10+i),
				LastUsedAt: base + 10, ExpiresAt: base + 100}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CloseSession(ctx, "sess_a", base+50); err != nil {
			t.Fatal(err)
		}
		ids := func(ss []*engine.Session) []string {
			out := []string{}
			for _, x := range ss {
				out = append(out, x.ID)
			}
			return out
		}
		all, err := s.ListSessions(ctx, "")
		if err != nil || !reflect.DeepEqual(ids(all), []string{"sess_d", "sess_c", "sess_b"}) {
			t.Fatalf("ListSessions(all) = %v, %v; want [sess_d sess_c sess_b]", ids(all), err)
		}
		if all[1].OwnerID != "own_2" || all[1].CreatedAt != base+12 || all[1].ClosedAt != nil {
			t.Errorf("listed session = %+v", all[1])
		}
		mine, err := s.ListSessions(ctx, "own_1")
		if err != nil || !reflect.DeepEqual(ids(mine), []string{"sess_d", "sess_b"}) {
			t.Fatalf("ListSessions(own_1) = %v, %v; want [sess_d sess_b]", ids(mine), err)
		}
		none, err := s.ListSessions(ctx, "own_none")
		if err != nil || len(none) != 0 {
			t.Fatalf("ListSessions(own_none) = %v, %v", ids(none), err)
		}
	})

	t.Run("TouchOnlyOpen", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, id := range []string{"sess_open", "sess_closed"} {
			if err := s.PutSession(ctx, engine.Session{ID: id, OwnerID: "o", CreatedAt: base, LastUsedAt: base, ExpiresAt: base + 100}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CloseSession(ctx, "sess_closed", base+10); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchSession(ctx, engine.TouchSessionParams{SessionID: "sess_open", Now: base + 60, ExpiresAt: base + 200}); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetSession(ctx, "sess_open")
		if err != nil || got.LastUsedAt != base+60 || got.ExpiresAt != base+200 || got.CreatedAt != base {
			t.Fatalf("touched session = %+v, %v", got, err)
		}
		err = s.TouchSession(ctx, engine.TouchSessionParams{SessionID: "sess_closed", Now: base + 60, ExpiresAt: base + 200})
		checkErr(t, "TouchSession(closed)", err, engine.ErrNotFound)
		err = s.TouchSession(ctx, engine.TouchSessionParams{SessionID: "sess_nope", Now: base + 60, ExpiresAt: base + 200})
		checkErr(t, "TouchSession(unknown)", err, engine.ErrNotFound)
	})
}
