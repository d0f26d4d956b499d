package engine

import (
	"context"

	"github.com/google/uuid"
)

// PutSessionArtifact stores data as an artifact of an open session, for
// files the interactive tools bring out of a session's page (a download,
// a HAR capture) where no run exists to own them. Such an artifact is
// owned the way export_session_state's is: its RunID is the session's ID
// (a loose artifact, Store.PutLooseArtifact, without a run event), kept
// artifactTtlMs like every artifact and readable by get_artifact and
// resources/read. Text artifacts are stored as given: the caller masks
// what it knows to be secret (MaskSecrets) before, since a session has no
// run whose secret inputs the store would mask. Errors: SESSION_NOT_FOUND,
// EXECUTION_ERROR.
func (e *Engine) PutSessionArtifact(ctx context.Context, sessionID, name, mimeType string, data []byte) (*Artifact, error) {
	s, err := e.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	now := e.now()
	a := Artifact{ID: "art_" + uuid.NewString(), RunID: sessionID, Name: name, MimeType: mimeType,
		Size: int64(len(data)), CreatedAt: now, ExpiresAt: now + e.cfg.ArtifactTTL.Milliseconds()}
	if err := e.store.PutLooseArtifact(ctx, a, data); err != nil {
		return nil, Wrap(ExecutionError, err, "store %s: %v", name, err)
	}
	e.touchSession(ctx, s)
	return &a, nil
}
