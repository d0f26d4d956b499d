package engine

import (
	"context"
	"encoding/json"
)

// secretStore wraps the Store so that no write of a run holding secrets
// carries them: results, errors, items, progress messages, events and text
// artifacts are redacted with the run's secret values (secrets.go). Runs
// without secrets pass through untouched (one map lookup per write).
type secretStore struct {
	Store
	vault *secretVault
}

func (s *secretStore) values(runID string) []string { return s.vault.values(runID) }

// FinishRun redacts the result and error.
func (s *secretStore) FinishRun(ctx context.Context, f Finish) error {
	if v := s.values(f.RunID); v != nil {
		f.Result = maskJSON(f.Result, v)
		f.Error = redactError(f.Error, v)
		if f.Progress != nil {
			p := *f.Progress
			p.Message = redactText(p.Message, v)
			f.Progress = &p
		}
	}
	return s.Store.FinishRun(ctx, f)
}

// CancelRun redacts the reason and error, and drops the secrets of a run
// that never started (nothing will execute it).
func (s *secretStore) CancelRun(ctx context.Context, p CancelRunParams) (*Run, bool, error) {
	if v := s.values(p.RunID); v != nil {
		p.Reason = redactText(p.Reason, v)
		p.Error = redactError(p.Error, v)
	}
	run, changed, err := s.Store.CancelRun(ctx, p)
	if err == nil && changed && run != nil && run.StartedAt == nil {
		s.vault.forget(p.RunID)
	}
	return run, changed, err
}

// SaveProgress redacts the progress message.
func (s *secretStore) SaveProgress(ctx context.Context, runID string, h Holder, p Progress, now int64) error {
	if v := s.values(runID); v != nil {
		p.Message = redactText(p.Message, v)
	}
	return s.Store.SaveProgress(ctx, runID, h, p, now)
}

// SaveItem redacts the item's key, output and error and the progress.
func (s *secretStore) SaveItem(ctx context.Context, runID string, h Holder, it Item, p Progress, now int64) error {
	if v := s.values(runID); v != nil {
		it.Key = redactText(it.Key, v)
		it.Output = maskJSON(it.Output, v)
		it.Error = redactError(it.Error, v)
		p.Message = redactText(p.Message, v)
	}
	return s.Store.SaveItem(ctx, runID, h, it, p, now)
}

// AppendEvent redacts the event data.
func (s *secretStore) AppendEvent(ctx context.Context, runID, typ string, data json.RawMessage, now int64) error {
	if v := s.values(runID); v != nil {
		data = maskJSON(data, v)
	}
	return s.Store.AppendEvent(ctx, runID, typ, data, now)
}

// PutArtifact redacts text artifacts (images and PDFs are stored as they
// are: a password field renders as dots).
func (s *secretStore) PutArtifact(ctx context.Context, a Artifact, data []byte) error {
	if v := s.values(a.RunID); v != nil && IsTextMime(a.MimeType) {
		data = []byte(redactText(string(data), v))
	}
	return s.Store.PutArtifact(ctx, a, data)
}
