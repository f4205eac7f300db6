-- The credential detector grows (memory.SecretRulesVersion): data stored while an older
-- version ran may hold what the new rules catch. rules is the version of the detector the
-- store's redaction repair ran, or runs, with; a binary with newer rules restarts the
-- repair from the first row (ltm.RunRepairs), and its cursor makes the re-scan resume
-- after a crash. Rows before this migration were scanned with the first rules.
ALTER TABLE store_repairs ADD COLUMN rules INTEGER NOT NULL DEFAULT 1;
