package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
)

// staleReadKey marks the one Get whose run row the store hands back stale.
type staleReadKey struct{}

// interleavingStore holds the run's "waiting for input" progress write
// until a marked GetRun has read the row, and hands that row back only
// once the question is stored: the interleaving a reader on a loaded
// machine meets when its two reads straddle the run's two writes.
type interleavingStore struct {
	engine.Store
	aboutToWait chan struct{} // closed when the waiting progress is about to be written
	rowRead     chan struct{} // closed once the marked reader has read the row
	asked       chan struct{} // closed once the question is stored
	stale       sync.Once     // only the marked Get's first read is held
}

func (s *interleavingStore) SaveProgress(ctx context.Context, runID string, h engine.Holder, p engine.Progress, now int64) error {
	if strings.HasPrefix(p.Message, "waiting for input: ") {
		close(s.aboutToWait)
		<-s.rowRead
	}
	return s.Store.SaveProgress(ctx, runID, h, p, now)
}

func (s *interleavingStore) AddQuestion(ctx context.Context, q engine.Question) error {
	err := s.Store.AddQuestion(ctx, q)
	close(s.asked)
	return err
}

func (s *interleavingStore) GetRun(ctx context.Context, runID string) (*engine.Run, error) {
	r, err := s.Store.GetRun(ctx, runID)
	if ctx.Value(staleReadKey{}) != nil {
		s.stale.Do(func() {
			close(s.rowRead)
			<-s.asked
		})
	}
	return r, err
}

// TestGetShowsWhatTheQuestionWaitsFor: a run read with its question also
// shows "waiting for input: …" in progress.message, even when the row was
// read before the run wrote that message and the question after it was
// stored (TestBlackboxOneTimeCodeFromAnotherProcess saw "submitting" with
// an inputRequest on a loaded machine).
func TestGetShowsWhatTheQuestionWaitsFor(t *testing.T) {
	synctest.Test(t, testGetShowsWhatTheQuestionWaitsFor)
}

func testGetShowsWhatTheQuestionWaitsFor(t *testing.T) {
	st := &interleavingStore{Store: openStore(t), aboutToWait: make(chan struct{}), rowRead: make(chan struct{}), asked: make(chan struct{})}
	eng := startEngine(t, st, devtpl.ToolJob{}, engine.Config{}, nil)
	id := submitAsk(t, eng)
	<-st.aboutToWait
	run, err := eng.Get(context.WithValue(context.Background(), staleReadKey{}, true), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Question == nil || run.Question.RequestID != "confirm" {
		t.Fatalf("inputRequest = %+v, want the question", run.Question)
	}
	if run.Progress.Message != "waiting for input: Go on?" {
		t.Fatalf("progress.message = %q with the question shown, want %q", run.Progress.Message, "waiting for input: Go on?")
	}
	list, err := eng.List(context.Background(), engine.ListQuery{})
	if err != nil || len(list.Runs) != 1 || list.Runs[0].Question == nil || list.Runs[0].Progress.Message != "waiting for input: Go on?" {
		t.Fatalf("list = %+v, %v", list, err)
	}
}
