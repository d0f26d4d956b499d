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
