package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Browser is what the engine needs from the browser manager: describing
// it for the profile, opening a named session (optionally restoring a
// saved storage state), exporting a session's state, and closing a session
// (a named one, or the one a run owned when the run ends).
type Browser interface {
	BrowserDescriber
	SessionCloser
	// OpenSession creates the session's browser context and restores
	// state (JSON, may be nil). Errors: INVALID_PARAMETER, EXECUTION_ERROR.
	OpenSession(ctx context.Context, sessionID string, state json.RawMessage) error
	// ExportSession returns the session's cookies and localStorage as JSON.
	// Errors: SESSION_NOT_FOUND, EXECUTION_ERROR.
	ExportSession(ctx context.Context, sessionID string) (json.RawMessage, error)
}

// SessionRequirer is implemented by templates that only make sense in a
// named session (login: a login into a throwaway session is lost at once).
// Submitting one without sessionId is INVALID_PARAMETER.
type SessionRequirer interface {
	RequiresSession() bool
}

// ProfileRequirer is implemented by templates that only make sense in a
// persistent browser profile (profile_sign_in).
type ProfileRequirer interface {
	RequiresProfile() bool
}

// CreateSessionRequest is create_browser_session's input: a storage state
// to restore, given inline or as the artifactId export_session_state made.
type CreateSessionRequest struct {
	StorageState json.RawMessage
	ArtifactID   string
}

// SessionExport is export_session_state's answer.
type SessionExport struct {
	SessionID  string `json:"sessionId"`
	ArtifactID string `json:"artifactId"`
	MimeType   string `json:"mimeType"`
	Size       int64  `json:"size"`
	ExpiresAt  int64  `json:"expiresAt"`
}

// sessionSet remembers the named sessions this process opened in its
// browser, so the sweep can close the ones closed elsewhere.
type sessionSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

// sessionBrowser returns the browser for named sessions. Errors:
// EXECUTION_ERROR when this server has no browser.
func (e *Engine) sessionBrowser() (Browser, error) {
	if e.browser == nil {
		return nil, Errorf(ExecutionError, "this server has no browser for sessions")
	}
	return e.browser, nil
}

// sessionIdleTTL is the idle lifetime of a named session in ms, the unit
// of the store's timestamps.
func (e *Engine) sessionIdleTTL() int64 { return e.cfg.SessionIdleTTL.Milliseconds() }

// CreateSession opens a named browser session owned by this process,
// restoring a saved storage state when given. It expires after
// sessionIdleTtlMs without use. Errors: INVALID_PARAMETER (bad state),
// ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, EXECUTION_ERROR (no browser).
func (e *Engine) CreateSession(ctx context.Context, r CreateSessionRequest) (*Session, error) {
	sb, err := e.sessionBrowser()
	if err != nil {
		return nil, err
	}
	state := r.StorageState
	if r.ArtifactID != "" {
		if len(bytes.TrimSpace(state)) > 0 && !bytes.Equal(bytes.TrimSpace(state), []byte("null")) {
			return nil, Errorf(InvalidParameter, "give either storageState or storageStateArtifactId, not both").
				WithDetails(map[string]any{"field": "storageStateArtifactId"})
		}
		a, err := e.Artifact(ctx, r.ArtifactID)
		if err != nil {
			return nil, err
		}
		if state, err = e.store.ReadArtifact(ctx, ReadArtifactParams{ArtifactID: a.ID, Length: a.Size}); err != nil {
			return nil, Wrap(ExecutionError, err, "read artifact: %v", err)
		}
	}
	id := "sess_" + uuid.NewString()
	if err := sb.OpenSession(ctx, id, state); err != nil {
		return nil, AsError(err)
	}
	// The clock starts once the browser is ready (a first launch takes seconds).
	now := e.now()
	s := Session{ID: id, OwnerID: e.ownerID, CreatedAt: now, LastUsedAt: now, ExpiresAt: now + e.sessionIdleTTL()}
	if err := e.store.PutSession(ctx, s); err != nil {
		_ = sb.CloseSession(context.WithoutCancel(ctx), s.ID)
		return nil, Wrap(ExecutionError, err, "store session: %v", err)
	}
	e.named.mu.Lock()
	if e.named.ids == nil {
		e.named.ids = map[string]bool{}
	}
	e.named.ids[s.ID] = true
	e.named.mu.Unlock()
	e.log.Info("browser session created", "sessionId", s.ID, "restored", len(state) > 0)
	return &s, nil
}

// ListSessions returns the open, unexpired sessions of every process
// sharing the database, newest first.
func (e *Engine) ListSessions(ctx context.Context) ([]*Session, error) {
	all, err := e.store.ListSessions(ctx, "")
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list sessions: %v", err)
	}
	now := e.now()
	out := make([]*Session, 0, len(all))
	for _, s := range all {
		if s.ExpiresAt > now {
			out = append(out, s)
		}
	}
	return out, nil
}

// liveSession returns an open, unexpired session. Errors: SESSION_NOT_FOUND.
func (e *Engine) liveSession(ctx context.Context, sessionID string) (*Session, error) {
	s, err := e.store.GetSession(ctx, sessionID)
	if errors.Is(err, ErrNotFound) || (err == nil && (s.ClosedAt != nil || s.ExpiresAt <= e.now())) {
		return nil, Errorf(SessionNotFound, "session %q does not exist, was closed or expired", sessionID).
			WithDetails(map[string]any{"sessionId": sessionID})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "look up session: %v", err)
	}
	return s, nil
}

// CloseSession closes a session: its row is marked closed at once and its
// browser context is disposed (by its owning process: at once when that is
// this one, else at that process's next sweep). Runs still using it fail.
// Errors: SESSION_NOT_FOUND.
func (e *Engine) CloseSession(ctx context.Context, sessionID string) (*Session, error) {
	s, err := e.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	now := e.now()
	switch closed, err := e.store.CloseSession(ctx, sessionID, now); {
	case err == nil:
		s = closed
	case errors.Is(err, ErrNotFound): // deleted meanwhile: closed all the same
		s.ClosedAt = &now
	default:
		return nil, Wrap(ExecutionError, err, "close session: %v", err)
	}
	if s.OwnerID == e.ownerID {
		e.closeLocalSession(context.WithoutCancel(ctx), sessionID)
	}
	e.log.Info("browser session closed", "sessionId", sessionID)
	return s, nil
}

// closeLocalSession disposes a named session's browser context here.
func (e *Engine) closeLocalSession(ctx context.Context, sessionID string) {
	e.named.mu.Lock()
	delete(e.named.ids, sessionID)
	e.named.mu.Unlock()
	if e.browser != nil {
		if err := e.browser.CloseSession(ctx, sessionID); err != nil {
			e.log.Debug("close browser session failed", "sessionId", sessionID, "err", err)
		}
	}
}

// ExportSessionState saves the session's cookies and localStorage as a
// JSON artifact (kept artifactTtlMs) that CreateSession can restore.
// Errors: SESSION_NOT_FOUND, EXECUTION_ERROR (the session belongs to
// another process, or the browser failed).
func (e *Engine) ExportSessionState(ctx context.Context, sessionID string) (*SessionExport, error) {
	s, err := e.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if s.OwnerID != e.ownerID {
		return nil, Errorf(ExecutionError, "session %s lives in another browsertask process sharing this database; call export_session_state on the server that created it", sessionID).
			WithDetails(map[string]any{"sessionId": sessionID})
	}
	sb, err := e.sessionBrowser()
	if err != nil {
		return nil, err
	}
	data, err := sb.ExportSession(ctx, sessionID)
	if err != nil {
		return nil, AsError(err)
	}
	now := e.now()
	a := Artifact{ID: "art_" + uuid.NewString(), RunID: sessionID, Name: "session-state.json",
		MimeType: "application/json", Size: int64(len(data)), CreatedAt: now, ExpiresAt: now + e.cfg.ArtifactTTL.Milliseconds()}
	if err := e.store.PutLooseArtifact(ctx, a, data); err != nil {
		return nil, Wrap(ExecutionError, err, "store session state: %v", err)
	}
	e.touchSession(ctx, s)
	return &SessionExport{SessionID: sessionID, ArtifactID: a.ID, MimeType: a.MimeType, Size: a.Size, ExpiresAt: a.ExpiresAt}, nil
}

// touchSession records a use of a named session, pushing its expiry.
func (e *Engine) touchSession(ctx context.Context, s *Session) {
	now := e.now()
	if err := e.store.TouchSession(ctx, TouchSessionParams{SessionID: s.ID, Now: now, ExpiresAt: now + e.sessionIdleTTL()}); err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Debug("touch session failed", "sessionId", s.ID, "err", err)
	}
}

// sessionSweepInterval is how often idle sessions are looked for.
func (e *Engine) sessionSweepInterval() time.Duration {
	d := e.cfg.SessionIdleTTL / 10
	return min(max(d, 200*time.Millisecond), 10*time.Second)
}

// sweepSessions keeps named sessions in use alive, closes the idle ones
// this process owns and disposes browser contexts of sessions closed by
// another process. (Rows of sessions whose process is gone are closed by
// recovery: orphanGrace.)
func (e *Engine) sweepSessions(ctx context.Context) {
	mine, err := e.store.ListSessions(ctx, e.ownerID)
	if err != nil {
		return
	}
	e.mu.Lock()
	busy := map[string]bool{}
	for _, a := range e.active {
		busy[a.run.SessionID] = true
	}
	e.mu.Unlock()
	now := e.now()
	open := map[string]bool{}
	for _, s := range mine {
		switch {
		case busy[s.ID]:
			open[s.ID] = true
			e.touchSession(ctx, s)
		case s.ExpiresAt <= now:
			if _, err := e.store.CloseSession(ctx, s.ID, now); err == nil {
				e.log.Info("browser session expired (idle)", "sessionId", s.ID, "idleTtlMs", e.sessionIdleTTL())
			}
			e.closeLocalSession(ctx, s.ID)
		default:
			open[s.ID] = true
		}
	}
	e.named.mu.Lock()
	var gone []string
	for id := range e.named.ids {
		if !open[id] {
			gone = append(gone, id)
		}
	}
	e.named.mu.Unlock()
	for _, id := range gone {
		// Re-read: the session may have been stored after the list above.
		if _, err := e.store.GetSession(ctx, id); errors.Is(err, ErrNotFound) {
			e.closeLocalSession(ctx, id)
		}
	}
}
