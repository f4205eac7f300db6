-- One-time repairs of data older versions wrote, resumable as on SQLite (migration 0005 and
-- 0023 there): cursor is the last row a repair finished, done_at when it ended, rules the
-- version of the credential detector (memory.SecretRulesVersion) the redaction ran with.
-- Rows written before now were redacted by the first rules only: the redaction re-scans them.
CREATE TABLE store_repairs (
    name    TEXT    PRIMARY KEY,
    cursor  BIGINT  NOT NULL DEFAULT 0,
    done_at BIGINT,
    rules   INTEGER NOT NULL DEFAULT 1
);
INSERT INTO store_repairs (name) VALUES ('redact-secrets');
