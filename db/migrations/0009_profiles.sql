-- Persistent browser profiles (engine.ProfileStore): a name, a note, when
-- it was created and last used, the cookie domains (sites, a JSON array of
-- names, never a cookie value) and the directory's size when its browser
-- last closed. holder_id and lease_expires_at say which process has the
-- profile's Chromium open: two processes never open one user-data
-- directory. runs.profile is the profile a run used ('' = none).
CREATE TABLE profiles (
    name             TEXT    PRIMARY KEY,
    note             TEXT    NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    last_used_at     INTEGER NOT NULL DEFAULT 0,
    sites            TEXT    NOT NULL DEFAULT '[]',
    size_bytes       INTEGER NOT NULL DEFAULT 0,
    holder_id        TEXT    NOT NULL DEFAULT '',
    lease_expires_at INTEGER NOT NULL DEFAULT 0
) STRICT;

ALTER TABLE runs ADD COLUMN profile TEXT NOT NULL DEFAULT '';
