-- runs.profile gets the index the other list filters have (template,
-- session): list_runs --profile NAME reads the newest runs of one profile
-- from this index in order instead of walking every run newest first.
-- Number 11: 0010 is taken by the session events migration.
CREATE INDEX runs_profile_created ON runs (profile, created_at DESC, id DESC);
