package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestForgottenRunsLeaveHistory(t *testing.T) { synctest.Test(t, testForgottenRunsLeaveHistory) }

func testForgottenRunsLeaveHistory(t *testing.T) {
	h := newHarness(t, engine.Config{RunTTL: 1 * time.Millisecond, JanitorInterval: 20 * time.Millisecond}, "")
	ok := h.submit(`{"ms":0,"items":3,"artifact":"hello","mime":"text/plain"}`)
	failed := h.submit(`{"ms":0,"fail":true}`)
	// The janitor forgets both runs once they end (runTtlMs 1 ms) and
	// keeps their history.
	ctx := context.Background()
	var hist *engine.HistoryList
	fixture.WaitUntil(t, "both runs in the history", func() bool {
		var err error
		if hist, err = h.eng.History(ctx, 10, 0); err != nil {
			t.Fatal(err)
		}
		return hist.Total == 2
	})
	for _, id := range []string{ok.RunID, failed.RunID} {
		if _, err := h.eng.Get(ctx, id); engine.CodeOf(err) != engine.RunNotFound {
			t.Fatalf("get_task_run of a forgotten run: %v, want RUN_NOT_FOUND", err)
		}
	}
	byID := map[string]engine.HistoryEntry{}
	for _, r := range hist.Runs {
		byID[r.RunID] = r
	}
	f, s := byID[failed.RunID], byID[ok.RunID]
	if f.Status != engine.StatusFailed || f.ErrorCode != "STEP_EXECUTION_FAILED" || f.ErrorMessage != "asked to fail" || f.InputsSummary != "fail true · ms 0" {
		t.Fatalf("failed run's history: %+v", f)
	}
	if s.Status != engine.StatusSucceeded || s.TemplateID != "test_sleep" || s.TemplateVersion != 1 || s.SessionID != ok.SessionID ||
		s.Progress.DoneSteps != 3 || s.Progress.TotalSteps != 3 || s.InputsSummary != "items 3 · ms 0" || s.ErrorCode != "" ||
		s.CreatedAt != ok.CreatedAt || s.FinishedAt == nil || s.StartedAt == nil || s.ForgottenAt < *s.FinishedAt ||
		s.ExpiresAt != s.ForgottenAt+(7*24*time.Hour).Milliseconds() {
		t.Fatalf("succeeded run's history: %+v", s)
	}
	if len(s.ArtifactIDs) != 1 || len(s.Artifacts) != 1 || s.Artifacts[0].ID != s.ArtifactIDs[0] || s.Artifacts[0].Name != "out" {
		t.Fatalf("artifacts of the succeeded run: %v %+v", s.ArtifactIDs, s.Artifacts)
	}
	if hist.Runs[0].CreatedAt < hist.Runs[1].CreatedAt {
		t.Fatalf("history not newest first: %d then %d", hist.Runs[0].CreatedAt, hist.Runs[1].CreatedAt)
	}
}
