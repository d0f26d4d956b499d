-- 0001_init: the PostgreSQL schema, the same tables and columns as the
-- SQLite store's migrations 0001-0008 (db/migrations). Times are BIGINT
-- Unix milliseconds supplied by the engine's clock; JSON columns are TEXT
-- holding the exact bytes the engine wrote; flags are 0/1 integers as in
-- SQLite, so both stores read the same way.

CREATE TABLE owners (
    id           TEXT    PRIMARY KEY,
    pid          INTEGER NOT NULL,
    host         TEXT    NOT NULL,
    started_at   BIGINT  NOT NULL,
    heartbeat_at BIGINT  NOT NULL,
    live_url     TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE runs (
    id               TEXT    PRIMARY KEY,
    template_id      TEXT    NOT NULL,
    template_version INTEGER NOT NULL,
    session_id       TEXT    NOT NULL DEFAULT '',
    owns_session     INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL CHECK (status IN
        ('queued', 'running', 'succeeded', 'failed', 'partial_success', 'canceled')),
    mode             TEXT    NOT NULL DEFAULT '',
    progress_done    BIGINT  NOT NULL DEFAULT 0,
    progress_total   BIGINT  NOT NULL DEFAULT 0,
    progress_failed  BIGINT  NOT NULL DEFAULT 0,
    progress_message TEXT    NOT NULL DEFAULT '',
    result           TEXT,
    error            TEXT,
    inputs           TEXT,
    timeout_ms       BIGINT  NOT NULL DEFAULT 0,
    ttl_ms           BIGINT  NOT NULL DEFAULT 0,
    owner_id         TEXT    NOT NULL DEFAULT '',
    session_owner_id TEXT    NOT NULL DEFAULT '',
    lease_expires_at BIGINT  NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    crashes          INTEGER NOT NULL DEFAULT 0,
    idempotency_key  TEXT    NOT NULL DEFAULT '',
    cancel_reason    TEXT    NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    expires_at       BIGINT  NOT NULL,
    event_seq        BIGINT  NOT NULL DEFAULT 0,
    output_schema    TEXT,
    client_sampling  INTEGER NOT NULL DEFAULT 0,
    model_calls      BIGINT  NOT NULL DEFAULT 0,
    prompt_tokens    BIGINT  NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_created ON runs (created_at DESC, id DESC);
CREATE INDEX runs_template_created ON runs (template_id, created_at DESC, id DESC);
CREATE INDEX runs_session_created ON runs (session_id, created_at DESC, id DESC);
CREATE INDEX runs_status_lease ON runs (status, lease_expires_at);
CREATE INDEX runs_running_owner ON runs (owner_id) WHERE status = 'running';
CREATE INDEX runs_status_expiry ON runs (status, expires_at);

CREATE TABLE run_items (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx    INTEGER NOT NULL,
    key    TEXT    NOT NULL,
    status TEXT    NOT NULL,
    output TEXT,
    error  TEXT,
    PRIMARY KEY (run_id, idx)
);

CREATE TABLE run_events (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    BIGINT  NOT NULL,
    at     BIGINT  NOT NULL,
    type   TEXT    NOT NULL,
    data   TEXT,
    PRIMARY KEY (run_id, seq)
);

-- Artifacts outlive their run (own TTL), so there is no foreign key to runs.
-- ord keeps the insertion order SQLite's rowid gave.
CREATE TABLE artifacts (
    id         TEXT    PRIMARY KEY,
    ord        BIGINT  GENERATED ALWAYS AS IDENTITY,
    run_id     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    size       BIGINT  NOT NULL,
    created_at BIGINT  NOT NULL,
    expires_at BIGINT  NOT NULL,
    tombstone  INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX artifacts_run ON artifacts (run_id, created_at, ord);
CREATE INDEX artifacts_expiry ON artifacts (tombstone, expires_at);

CREATE TABLE artifact_chunks (
    artifact_id TEXT    NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    seq         BIGINT  NOT NULL,
    data        BYTEA   NOT NULL CHECK (length(data) <= 262144),
    PRIMARY KEY (artifact_id, seq)
);

-- The foreign key is deferred so CreateRun can claim the key before it
-- inserts the run, in the same transaction.
CREATE TABLE idempotency_keys (
    template_id TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    run_id      TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE
                        DEFERRABLE INITIALLY DEFERRED,
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (template_id, key)
);

CREATE INDEX idempotency_keys_run ON idempotency_keys (run_id);

CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY,
    owner_id     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    last_used_at BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    closed_at    BIGINT
);

CREATE INDEX sessions_expiry ON sessions (expires_at) WHERE closed_at IS NULL;

-- What a run asked a person or a client for, and the answer; public_key
-- seals a secret answer for the executing process (see db/migrations/0004).
CREATE TABLE run_inputs (
    run_id       TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    request_id   TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    message      TEXT    NOT NULL DEFAULT '',
    request      TEXT    NOT NULL,
    requested_at BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    response     TEXT,
    answered_at  BIGINT,
    public_key   BYTEA,
    PRIMARY KEY (run_id, request_id)
);

CREATE TABLE run_history (
    id               TEXT    PRIMARY KEY,
    template_id      TEXT    NOT NULL,
    template_version INTEGER NOT NULL,
    session_id       TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    created_at       BIGINT  NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    forgotten_at     BIGINT  NOT NULL,
    progress_done    BIGINT  NOT NULL,
    progress_total   BIGINT  NOT NULL,
    progress_failed  BIGINT  NOT NULL,
    error_code       TEXT    NOT NULL DEFAULT '',
    error_message    TEXT    NOT NULL DEFAULT '',
    inputs_summary   TEXT    NOT NULL DEFAULT '',
    artifact_ids     TEXT    NOT NULL DEFAULT '[]',
    expires_at       BIGINT  NOT NULL
);

CREATE INDEX run_history_created ON run_history (created_at DESC, id DESC);
CREATE INDEX run_history_expiry ON run_history (expires_at);
