-- output_schema is options.outputSchema of a run whose template uses it
-- (extract_structured): the JSON Schema each of its items must validate
-- against. NULL for every other run (templates that do not use it ignore
-- it, as the v1 contract says).
ALTER TABLE runs ADD COLUMN output_schema TEXT;
