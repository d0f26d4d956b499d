-- run_inputs holds what a run asked a person or a client for, and the
-- answer once one came: the request in its MCP form (request, a JSON
-- {method, params}), who may answer until when (expires_at) and the
-- response (NULL while outstanding). A run that waits polls its rows, so
-- any process on the database can deliver an answer. Rows go with the run.
CREATE TABLE run_inputs (
  run_id       TEXT    NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  request_id   TEXT    NOT NULL,
  kind         TEXT    NOT NULL,
  message      TEXT    NOT NULL DEFAULT '',
  request      TEXT    NOT NULL,
  requested_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  response     TEXT,
  answered_at  INTEGER,
  PRIMARY KEY (run_id, request_id)
);
