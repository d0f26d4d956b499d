-- public_key is the X25519 public half of the key pair the executing
-- process holds in memory for a secret question (kind "secret"): any
-- process that takes the answer seals it to this key before writing
-- response, so a one-time code never reaches the database in clear. NULL
-- for questions whose answers are not secret.
ALTER TABLE run_inputs ADD COLUMN public_key BLOB;
