-- run_history keeps a short record of every run after the run itself is
-- forgotten (runTtlMs after it ended): what it was, how it ended and which
-- artifacts it made, for --history-ttl (7 days by default). No result, no
-- inputs (only a one-line summary, secrets masked), no items or events.
CREATE TABLE run_history (
    id               TEXT    PRIMARY KEY,
    template_id      TEXT    NOT NULL,
    template_version INTEGER NOT NULL,
    session_id       TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    forgotten_at     INTEGER NOT NULL,
    progress_done    INTEGER NOT NULL,
    progress_total   INTEGER NOT NULL,
    progress_failed  INTEGER NOT NULL,
    error_code       TEXT    NOT NULL DEFAULT '',
    error_message    TEXT    NOT NULL DEFAULT '',
    inputs_summary   TEXT    NOT NULL DEFAULT '',
    artifact_ids     TEXT    NOT NULL DEFAULT '[]',
    expires_at       INTEGER NOT NULL
) STRICT;

CREATE INDEX run_history_created ON run_history (created_at DESC, id DESC);
CREATE INDEX run_history_expiry ON run_history (expires_at);
