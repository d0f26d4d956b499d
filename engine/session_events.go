package engine

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"
)

// SessionEvent is one interactive tool call on a browser session
// (browser_navigate, browser_act, browser_tabs, …): what was called on
// what, how it ended and how long it took. The dashboard's session page
// lists them, so a person sees what an agent did in a session that is no
// run. A typed value is kept only where it is no secret: the tools mask
// what went into a password or one-time-code field before it gets here.
type SessionEvent struct {
	SessionID string `json:"sessionId"`
	// Seq numbers the session's events from 1, in the order recorded.
	Seq int64 `json:"seq"`
	// At is when the call ended, Unix ms.
	At   int64  `json:"at"`
	Tool string `json:"tool"`
	// Tab is the session tab the call acted on (t1, t2, …).
	Tab string `json:"tab,omitempty"`
	// Action is browser_act's or browser_tabs' action.
	Action string `json:"action,omitempty"`
	// Target is the URL loaded or the element's reference (and its role
	// and name, as the snapshot showed it).
	Target string `json:"target,omitempty"`
	// Value is the text typed or the option chosen ("••••••" when masked).
	Value string `json:"value,omitempty"`
	// URL is the tab's address after the call.
	URL string `json:"url,omitempty"`
	// Outcome is "ok" or the error code of a failed call; Message its
	// message.
	Outcome    string `json:"outcome"`
	Message    string `json:"message,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// SessionEventStore keeps the events of browser sessions.
type SessionEventStore interface {
	// AppendSessionEvent stores ev under the session's next seq (ev.Seq
	// is ignored) and returns that seq; past MaxSessionEvents a session's
	// oldest events are deleted in the same transaction. ErrNotFound when
	// the session row does not exist.
	AppendSessionEvent(ctx context.Context, ev SessionEvent) (int64, error)
	// ListSessionEvents returns a session's events with seq > p.AfterSeq
	// in seq order, at most p.Limit (all when <= 0).
	ListSessionEvents(ctx context.Context, p ListSessionEventsParams) ([]SessionEvent, error)
}

// ListSessionEventsParams is a ListSessionEvents request.
type ListSessionEventsParams struct {
	SessionID string
	AfterSeq  int64
	Limit     int
}

// MaxSessionEvents is how many events a session keeps: its latest ones.
const MaxSessionEvents = 10000

// sessionEventTextLimit bounds each text field of a stored event.
const sessionEventTextLimit = 500

// RecordSessionEvent stores ev (At set to now, text fields cut to 500
// bytes) and counts as a use of the session, pushing its expiry.
// Errors: INVALID_PARAMETER without a session or tool; SESSION_NOT_FOUND
// for a session the store does not know; EXECUTION_ERROR.
func (e *Engine) RecordSessionEvent(ctx context.Context, ev SessionEvent) error {
	if ev.SessionID == "" || ev.Tool == "" {
		return Errorf(InvalidParameter, "a session event needs its sessionId and tool")
	}
	ev.At = e.now()
	for _, f := range []*string{&ev.Tab, &ev.Action, &ev.Target, &ev.Value, &ev.URL, &ev.Outcome, &ev.Message} {
		*f = cutText(*f, sessionEventTextLimit)
	}
	if _, err := e.store.AppendSessionEvent(ctx, ev); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Errorf(SessionNotFound, "session %q does not exist", ev.SessionID).WithDetails(map[string]any{"sessionId": ev.SessionID})
		}
		return Wrap(ExecutionError, err, "record session event: %v", err)
	}
	e.touchSession(ctx, &Session{ID: ev.SessionID})
	return nil
}

// SessionEvents returns up to limit events of a session after afterSeq
// (limit <= 0: DefaultEventLimit; at most MaxEventLimit), whether the
// session is open or not. Errors: INVALID_PARAMETER (negative afterSeq),
// EXECUTION_ERROR.
func (e *Engine) SessionEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]SessionEvent, error) {
	if afterSeq < 0 {
		return nil, Errorf(InvalidParameter, "afterSeq must be >= 0, got %d", afterSeq).WithDetails(map[string]any{"field": "afterSeq"})
	}
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	evs, err := e.store.ListSessionEvents(ctx, ListSessionEventsParams{SessionID: sessionID, AfterSeq: afterSeq, Limit: min(limit, MaxEventLimit)})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list session events: %v", err)
	}
	if evs == nil {
		evs = []SessionEvent{}
	}
	return evs, nil
}

// cutText cuts s to at most n bytes on a rune boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s) + "…"
}
