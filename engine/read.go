package engine

import (
	"context"
	"errors"
)

// Items returns the run's item checkpoints ordered by index, for the
// dashboard's per-item table. Errors: RUN_NOT_FOUND.
func (e *Engine) Items(ctx context.Context, runID string) ([]Item, error) {
	if _, err := e.get(ctx, runID); err != nil {
		return nil, err
	}
	items, err := e.store.ListItems(ctx, runID)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list items: %v", err)
	}
	if items == nil {
		items = []Item{}
	}
	return items, nil
}

// Artifact returns an artifact's metadata (name, type, size, expiry) so a
// download can set its headers before streaming. Errors:
// ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED.
func (e *Engine) Artifact(ctx context.Context, artifactID string) (*Artifact, error) {
	a, err := e.store.GetArtifact(ctx, artifactID)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ArtifactNotFound, "artifact %q does not exist", artifactID).WithDetails(map[string]any{"artifactId": artifactID})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "load artifact: %v", err)
	}
	if a.Expired || a.ExpiresAt <= e.now() {
		return nil, Errorf(ArtifactExpired, "artifact %q expired (artifactTtlMs %d)", artifactID, e.cfg.ArtifactTTLMs).
			WithDetails(map[string]any{"artifactId": artifactID, "expiredAt": a.ExpiresAt})
	}
	return a, nil
}

// ArtifactBytes returns up to length raw bytes of an artifact from offset
// (no text or base64 encoding), for downloads that stream the file in
// pieces. Errors: ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, INVALID_PARAMETER.
func (e *Engine) ArtifactBytes(ctx context.Context, artifactID string, offset, length int64) ([]byte, error) {
	a, err := e.Artifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if offset < 0 || offset > a.Size {
		return nil, Errorf(InvalidParameter, "offset must be 0..%d, got %d", a.Size, offset)
	}
	if length <= 0 {
		length = e.cfg.ArtifactMaxChunkSize
	}
	b, err := e.store.ReadArtifact(ctx, ReadArtifactParams{ArtifactID: artifactID, Offset: offset, Length: length})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read artifact: %v", err)
	}
	return b, nil
}
