package db

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestArchiveThenPurge: ArchiveRuns writes one history row per expired
// terminal run (once), Purge then deletes the run but not its history, and
// the history goes when HistoryBefore passes its expiry.
func TestArchiveThenPurge(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_live", 1))
	mustCreate(t, d, queuedRun("run_old", 1))
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_old", Error: engine.Errorf(engine.RunCanceled, "stop"), Now: 2}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_old", Name: "a.png", CreatedAt: 1, ExpiresAt: 10_000}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	summarize := func(tpl string, inputs json.RawMessage) string { return tpl + ":" + string(inputs) }
	p := engine.ArchiveParams{Now: 1001, HistoryTTLMs: 500, Summarize: summarize}
	for i, want := range []int{1, 0} { // archived once
		if n, err := d.ArchiveRuns(ctx, p); err != nil || n != want {
			t.Fatalf("ArchiveRuns #%d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 1001, HistoryBefore: 1001}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "runs"); n != 1 {
		t.Fatalf("runs after Purge = %d, want the live one", n)
	}
	rows, total, err := d.ListHistory(ctx, engine.HistoryQuery{Now: 1001})
	if err != nil || total != 1 || len(rows) != 1 {
		t.Fatalf("history: %v, %d, %v", rows, total, err)
	}
	h := rows[0]
	if h.RunID != "run_old" || h.Status != engine.StatusCanceled || h.ErrorCode != "RUN_CANCELED" || h.ErrorMessage != "stop" ||
		h.ForgottenAt != 1001 || h.ExpiresAt != 1501 || len(h.ArtifactIDs) != 1 || h.ArtifactIDs[0] != "art_1" ||
		h.InputsSummary != `tpl:{"x":1}` || h.FinishedAt == nil || *h.FinishedAt != 2 {
		t.Fatalf("history row: %+v", h)
	}
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 1501, HistoryBefore: 1502}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "run_history"); n != 0 {
		t.Fatalf("history rows after their expiry = %d", n)
	}
}

// TestPurgeArchivedOnly: with ArchivedOnly an expired run without its
// history row stays (its final write landed after ArchiveRuns) until it is
// archived.
func TestPurgeArchivedOnly(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_late", 1))
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_late", Error: engine.Errorf(engine.RunCanceled, "stop"), Now: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 1001, ArchivedOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "runs"); n != 1 {
		t.Fatalf("an unarchived run was purged (%d runs left)", n)
	}
	if n, err := d.ArchiveRuns(ctx, engine.ArchiveParams{Now: 1001, HistoryTTLMs: 500}); err != nil || n != 1 {
		t.Fatalf("ArchiveRuns = %d, %v", n, err)
	}
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 1001, ArchivedOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "runs"); n != 0 {
		t.Fatalf("the archived run was kept (%d runs left)", n)
	}
}
