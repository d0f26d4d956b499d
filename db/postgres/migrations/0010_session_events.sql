-- 0010_session_events: the interactive tool calls on a browser session
-- (engine.SessionEvent), the same table as the SQLite store's migration
-- 0010. data is the event as JSON; seq numbers a session's events from 1.
CREATE TABLE session_events (
    session_id TEXT   NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    at         BIGINT NOT NULL,
    data       TEXT   NOT NULL,
    PRIMARY KEY (session_id, seq)
);
