package browser

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
)

// OpenSession creates a named session's browser context now (launching
// the browser if needed) and restores state, a StorageState as JSON (nil or
// empty = a blank session). A named session outlives runs; once closed its
// id answers SESSION_NOT_FOUND. Errors: INVALID_PARAMETER (state is not a
// storage state), EXECUTION_ERROR (no browser).
func (m *Manager) OpenSession(ctx context.Context, sessionID string, state json.RawMessage) error {
	var st *StorageState
	if t := bytes.TrimSpace(state); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		st = &StorageState{}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(st); err != nil {
			return engine.Errorf(engine.InvalidParameter, "storageState must be {cookies: [...], origins: [{origin, localStorage: [{name, value}]}]} as export_session_state writes it: %v", err).
				WithDetails(map[string]any{"field": "storageState"})
		}
	}
	m.mu.Lock()
	m.named[sessionID] = true
	m.mu.Unlock()
	s, err := m.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	if err := s.ImportState(ctx, st); err != nil {
		_ = m.CloseSession(context.WithoutCancel(ctx), sessionID)
		return err
	}
	return nil
}

// ExportSession returns the session's StorageState as JSON. Errors:
// SESSION_NOT_FOUND (closed, or its browser exited), EXECUTION_ERROR.
func (m *Manager) ExportSession(ctx context.Context, sessionID string) (json.RawMessage, error) {
	s, err := m.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	st, err := s.ExportState(ctx)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "encode session state: %v", err)
	}
	return b, nil
}
