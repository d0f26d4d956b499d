-- client_sampling is 1 when the client that submitted the run declared MCP
-- sampling (its initialize capabilities, or a 2026-07-28 request's
-- clientCapabilities): a template may then ask that client's model
-- (sampling/createMessage) for what it needs.
-- model_calls, prompt_tokens and completion_tokens add up what the run's
-- questions to a model cost over all its attempts (the run's metrics).
ALTER TABLE runs ADD COLUMN client_sampling INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;
