-- 0001_init: the v1 schema. Times are integer Unix milliseconds supplied by
-- the engine's clock; JSON columns hold the exact bytes the engine wrote.

CREATE TABLE owners (
    id           TEXT    PRIMARY KEY,
    pid          INTEGER NOT NULL,
    host         TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
) STRICT;

CREATE TABLE runs (
    id               TEXT    PRIMARY KEY,
    template_id      TEXT    NOT NULL,
    template_version INTEGER NOT NULL,
    session_id       TEXT    NOT NULL DEFAULT '',
    owns_session     INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL CHECK (status IN
        ('queued', 'running', 'succeeded', 'failed', 'partial_success', 'canceled')),
    mode             TEXT    NOT NULL DEFAULT '',
    progress_done    INTEGER NOT NULL DEFAULT 0,
    progress_total   INTEGER NOT NULL DEFAULT 0,
    progress_failed  INTEGER NOT NULL DEFAULT 0,
    progress_message TEXT    NOT NULL DEFAULT '',
    result           TEXT,
    error            TEXT,
    inputs           TEXT,
    timeout_ms       INTEGER NOT NULL DEFAULT 0,
    ttl_ms           INTEGER NOT NULL DEFAULT 0,
    owner_id         TEXT    NOT NULL DEFAULT '',
    session_owner_id TEXT    NOT NULL DEFAULT '',
    lease_expires_at INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    idempotency_key  TEXT    NOT NULL DEFAULT '',
    cancel_reason    TEXT    NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    expires_at       INTEGER NOT NULL,
    event_seq        INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Claiming: FIFO among queued runs; also serves the status filter of lists.
CREATE INDEX runs_status_created ON runs (status, created_at, id);
-- Listing newest first, unfiltered and by template or session.
CREATE INDEX runs_created ON runs (created_at DESC, id DESC);
CREATE INDEX runs_template_created ON runs (template_id, created_at DESC, id DESC);
CREATE INDEX runs_session_created ON runs (session_id, created_at DESC, id DESC);
-- Running runs by lease (global limit, recovery) and by owner (heartbeat).
CREATE INDEX runs_status_lease ON runs (status, lease_expires_at);
CREATE INDEX runs_running_owner ON runs (owner_id) WHERE status = 'running';
-- Expiry of terminal runs (janitor).
CREATE INDEX runs_status_expiry ON runs (status, expires_at);

CREATE TABLE run_items (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx    INTEGER NOT NULL,
    key    TEXT    NOT NULL,
    status TEXT    NOT NULL,
    output TEXT,
    error  TEXT,
    PRIMARY KEY (run_id, idx)
) STRICT;

CREATE TABLE run_events (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    at     INTEGER NOT NULL,
    type   TEXT    NOT NULL,
    data   TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT;

-- Artifacts outlive their run (own TTL), so there is no foreign key to runs.
CREATE TABLE artifacts (
    id         TEXT    PRIMARY KEY,
    run_id     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    tombstone  INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX artifacts_run ON artifacts (run_id, created_at);
CREATE INDEX artifacts_expiry ON artifacts (tombstone, expires_at);

CREATE TABLE artifact_chunks (
    artifact_id TEXT    NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    data        BLOB    NOT NULL CHECK (length(data) <= 262144),
    PRIMARY KEY (artifact_id, seq)
) STRICT;

-- The foreign key is deferred so CreateRun can claim the key before it
-- inserts the run, in the same transaction.
CREATE TABLE idempotency_keys (
    template_id TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    run_id      TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE
                        DEFERRABLE INITIALLY DEFERRED,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (template_id, key)
) STRICT;

CREATE INDEX idempotency_keys_run ON idempotency_keys (run_id);

CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY,
    owner_id     TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    closed_at    INTEGER
) STRICT;

CREATE INDEX sessions_expiry ON sessions (expires_at) WHERE closed_at IS NULL;
