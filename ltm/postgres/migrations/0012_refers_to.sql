-- The span of time a memory's own words name ("the raid moved to next Friday", "先週の土曜日"),
-- resolved against its created_at: [refers_to, refers_to_end) in Unix milliseconds, NULL when
-- the words name no date or only an ambiguous one, as on SQLite (migration 0024 there). The
-- store computes it on every write that sets the content (ltm/refersto.go); recall's date
-- stage places a memory by it. Nullable columns without a default: adding them rewrites no row.
ALTER TABLE memories ADD COLUMN refers_to BIGINT, ADD COLUMN refers_to_end BIGINT;

-- Existing memories get theirs from Go, in resumable batches (ltm.RunRepairs). The backfill
-- is pending even on an empty database: `kioku migrate-store` copies SQLite's rows into a
-- schema migrated empty and leaves store_repairs behind, so rows an unfinished SQLite
-- backfill (or another client) left without their span are filled here at the next start.
-- With nothing to fill it finishes in one batch.
INSERT INTO store_repairs (name) VALUES ('fill-refers-to');
