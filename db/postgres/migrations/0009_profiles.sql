-- 0009_profiles: persistent browser profiles (engine.ProfileStore), the
-- same table and column as the SQLite store's migration 0009 (the number
-- is the SQLite one, so doctor reports one schema version for both
-- backends). A profile has a name, a note, when it was created and last
-- used, the cookie domains it held (sites: a JSON array of names as TEXT,
-- never a cookie value) and its directory's size when its browser last
-- closed. holder_id and lease_expires_at say which process has the
-- profile's Chromium open, so two processes never open one user-data
-- directory. runs.profile is the profile a run used ('' = none); existing
-- runs get ''.
CREATE TABLE profiles (
    name             TEXT    PRIMARY KEY,
    note             TEXT    NOT NULL DEFAULT '',
    created_at       BIGINT  NOT NULL,
    last_used_at     BIGINT  NOT NULL DEFAULT 0,
    sites            TEXT    NOT NULL DEFAULT '[]',
    size_bytes       BIGINT  NOT NULL DEFAULT 0,
    holder_id        TEXT    NOT NULL DEFAULT '',
    lease_expires_at BIGINT  NOT NULL DEFAULT 0
);

ALTER TABLE runs ADD COLUMN profile TEXT NOT NULL DEFAULT '';
