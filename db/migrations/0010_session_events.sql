-- 0010_session_events: the interactive tool calls on a browser session
-- (engine.SessionEvent), for the dashboard's session page. data is the
-- event as JSON (tool, tab, action, target, masked value, outcome,
-- duration); seq numbers a session's events from 1. They go with their
-- session row.
CREATE TABLE session_events (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    data       TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;
