package db

import (
	"context"
	"errors"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestSessions(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	s := engine.Session{ID: "sess_1", OwnerID: "owner_a", CreatedAt: 10, LastUsedAt: 20, ExpiresAt: 30}
	if err := d.PutSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := d.GetSession(ctx, "sess_1")
	if err != nil || *got != s {
		t.Fatalf("GetSession = %+v, %v; want %+v", got, err, s)
	}
	s.LastUsedAt = 25
	if err := d.PutSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.GetSession(ctx, "sess_1"); got.LastUsedAt != 25 {
		t.Fatalf("PutSession did not replace: %+v", got)
	}
	if err := d.CloseSession(ctx, "sess_1", 40); err != nil {
		t.Fatal(err)
	}
	if _, err := d.GetSession(ctx, "sess_1"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("GetSession(closed) = %v, want ErrNotFound", err)
	}
	if err := d.CloseSession(ctx, "sess_nope", 40); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("CloseSession(missing) = %v, want ErrNotFound", err)
	}
}

func TestListTouchSessionsAndLooseArtifact(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	for i, id := range []string{"sess_a", "sess_b", "sess_c"} {
		owner := "own_1"
		if id == "sess_c" {
			owner = "own_2"
		}
		if err := d.PutSession(ctx, engine.Session{ID: id, OwnerID: owner, CreatedAt: int64(10 + i), LastUsedAt: 10, ExpiresAt: 100}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.CloseSession(ctx, "sess_a", 50); err != nil {
		t.Fatal(err)
	}
	all, err := d.ListSessions(ctx, "")
	if err != nil || len(all) != 2 || all[0].ID != "sess_c" || all[1].ID != "sess_b" {
		t.Fatalf("ListSessions(all) = %v, %v", all, err)
	}
	mine, err := d.ListSessions(ctx, "own_1")
	if err != nil || len(mine) != 1 || mine[0].ID != "sess_b" {
		t.Fatalf("ListSessions(own_1) = %v, %v", mine, err)
	}
	if err := d.TouchSession(ctx, engine.TouchSessionParams{SessionID: "sess_b", Now: 60, ExpiresAt: 200}); err != nil {
		t.Fatal(err)
	}
	if s, _ := d.GetSession(ctx, "sess_b"); s.LastUsedAt != 60 || s.ExpiresAt != 200 {
		t.Fatalf("touched session = %+v", s)
	}
	if err := d.TouchSession(ctx, engine.TouchSessionParams{SessionID: "sess_a", Now: 60, ExpiresAt: 200}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("TouchSession(closed) = %v", err)
	}
	data := make([]byte, 300<<10)
	data[len(data)-1] = 7
	a := engine.Artifact{ID: "art_loose", RunID: "sess_b", Name: "state.json", MimeType: "application/json", CreatedAt: 1, ExpiresAt: 1000}
	if err := d.PutLooseArtifact(ctx, a, data); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_loose", Offset: int64(len(data) - 1), Length: 10})
	if err != nil || len(got) != 1 || got[0] != 7 {
		t.Fatalf("ReadArtifact = %v, %v", got, err)
	}
}
