package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// withMetrics fills the derived metrics of r as of now.
func (e *Engine) withMetrics(r *Run, now int64) *Run {
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	switch {
	case r.StartedAt != nil:
		r.Metrics.QueuedMs = max(*r.StartedAt-r.CreatedAt, 0)
		r.Metrics.ElapsedMs = max(end-*r.StartedAt, 0)
	default:
		r.Metrics.QueuedMs = max(end-r.CreatedAt, 0)
		r.Metrics.ElapsedMs = 0
	}
	if r.ArtifactIDs == nil {
		r.ArtifactIDs = []string{}
	}
	return r
}

// get loads a run, hiding expired ones. Errors: RUN_NOT_FOUND.
func (e *Engine) get(ctx context.Context, runID string) (*Run, error) {
	r, err := e.store.GetRun(ctx, runID)
	now := e.now()
	if errors.Is(err, ErrNotFound) || (err == nil && r.Status.Terminal() && r.ExpiresAt <= now) {
		return nil, Errorf(RunNotFound, "run %q does not exist or has expired", runID).WithDetails(map[string]any{"runId": runID})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "load run: %v", err)
	}
	return e.withMetrics(r, now), nil
}

// list returns a page of runs. Errors: INVALID_PARAMETER.
func (e *Engine) list(ctx context.Context, q ListQuery) (*RunList, error) {
	if q.Status != "" && !RunStatus(q.Status).Valid() {
		return nil, Errorf(InvalidParameter, "status must be one of queued, running, succeeded, failed, partial_success, canceled, got %q", q.Status)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Limit < 1 || q.Limit > 1000 {
		return nil, Errorf(InvalidParameter, "limit must be 1..1000, got %d", q.Limit)
	}
	if q.Offset < 0 {
		return nil, Errorf(InvalidParameter, "offset must be >= 0, got %d", q.Offset)
	}
	now := e.now()
	runs, total, err := e.store.ListRuns(ctx, RunFilter{
		Status: RunStatus(q.Status), TemplateID: q.TemplateID, SessionID: q.SessionID,
		Limit: q.Limit, Offset: q.Offset, Now: now,
		BeforeCreatedAt: q.BeforeCreatedAt, BeforeRunID: q.BeforeRunID,
	})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list runs: %v", err)
	}
	for _, r := range runs {
		e.withMetrics(r, now)
	}
	if runs == nil {
		runs = []*Run{}
	}
	return &RunList{Runs: runs, Total: total, Limit: q.Limit, Offset: q.Offset}, nil
}

// cancel writes the canceled state first, then stops local work at once;
// a peer executing the run notices on its next heartbeat.
func (e *Engine) cancel(ctx context.Context, runID, reason string) (*CancelResult, error) {
	r, err := e.get(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status.Terminal() {
		return &CancelResult{Success: false, RunID: runID, Status: r.Status, Reason: fmt.Sprintf("run already %s", r.Status)}, nil
	}
	msg := "the run was cancelled"
	if reason != "" {
		msg += ": " + reason
	}
	cerr := Errorf(RunCanceled, "%s", msg)
	if reason != "" {
		cerr.WithDetails(map[string]any{"reason": reason})
	}
	after, changed, err := e.store.CancelRun(ctx, CancelRunParams{RunID: runID, Reason: reason, Error: cerr, Now: e.now(), RunTTLMs: e.cfg.RunTTLMs})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(RunNotFound, "run %q does not exist or has expired", runID)
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "cancel run: %v", err)
	}
	if !changed {
		return &CancelResult{Success: false, RunID: runID, Status: after.Status, Reason: fmt.Sprintf("run already %s", after.Status)}, nil
	}
	e.interrupt(runID, errCauseCanceled)
	e.notify()
	e.kick()
	e.log.Info("run canceled", "runId", runID, "reason", reason)
	return &CancelResult{Success: true, RunID: runID, Status: StatusCanceled}, nil
}

// wait polls the run on every local change, and at least every 250 ms for
// runs executed by peers, until it is terminal or ctx ends.
func (e *Engine) wait(ctx context.Context, runID string, onChange func(*Run)) (*Run, error) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	var last *Run
	for {
		ch := e.changes()
		r, err := e.get(ctx, runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if onChange != nil && (last == nil || last.Status != r.Status || last.Progress != r.Progress) {
			onChange(r)
		}
		last = r
		if r.Status.Terminal() {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}

// readArtifact returns one chunk; see ReadArtifact.
func (e *Engine) readArtifact(ctx context.Context, artifactID string, offset, length int64) (*ArtifactChunk, error) {
	a, err := e.Artifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, Errorf(InvalidParameter, "offset must be >= 0, got %d", offset)
	}
	if offset > a.Size {
		return nil, Errorf(InvalidParameter, "offset %d is past the end of the artifact (totalSize %d)", offset, a.Size)
	}
	maxLen := e.cfg.ArtifactMaxChunkSize
	if length <= 0 || length > maxLen {
		length = maxLen
	}
	chunk := &ArtifactChunk{ArtifactID: a.ID, MimeType: a.MimeType, TotalSize: a.Size, Offset: offset}
	if offset == a.Size {
		chunk.Complete = true
		return chunk, nil
	}
	text := IsTextMime(a.MimeType)
	want := length
	if text {
		want += 3 // room to finish a character that straddles the end
	}
	buf, err := e.store.ReadArtifact(ctx, ReadArtifactParams{ArtifactID: a.ID, Offset: offset, Length: want})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read artifact: %v", err)
	}
	if text {
		if len(buf) > 0 && isContinuation(buf[0]) {
			return nil, Errorf(InvalidParameter, "offset %d falls inside a UTF-8 character; continue from the previous chunk's offset+length", offset)
		}
		buf = textChunk(buf, int(length))
	} else if int64(len(buf)) > length {
		buf = buf[:length]
	}
	chunk.Length = int64(len(buf))
	chunk.Data = encodeChunk(a.MimeType, buf)
	chunk.Complete = offset+chunk.Length == a.Size
	return chunk, nil
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }
