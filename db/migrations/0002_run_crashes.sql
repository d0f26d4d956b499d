-- crashes counts the executions of a run that ended with their process
-- gone (recovered after the lease expired). A graceful requeue does not
-- count. The engine fails a run once crashes reaches --max-attempts, so a
-- run that kills its process cannot take every restart down with it.
ALTER TABLE runs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
