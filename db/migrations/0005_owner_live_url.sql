-- live_url is the base URL of the dashboard a process serves ("" = none):
-- the live views of the runs it executes are served there, so another
-- process's dashboard can say where to watch them.
ALTER TABLE owners ADD COLUMN live_url TEXT NOT NULL DEFAULT '';
