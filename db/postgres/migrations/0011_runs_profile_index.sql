-- 0011_runs_profile_index: the same index as the SQLite store's migration
-- 0011 (the number is the SQLite one, so doctor reports one schema version
-- for both backends). list_runs --profile NAME reads the newest runs of one
-- profile from it in order, like the template and session filters.
CREATE INDEX runs_profile_created ON runs (profile, created_at DESC, id DESC);
