-- The span of time a memory's own words name ("the raid moved to next Friday", "先週の土曜日"),
-- resolved against its created_at: [refers_to, refers_to_end) in Unix milliseconds, NULL when
-- the words name no date or only an ambiguous one. The store computes it on every write that
-- sets the content (ltm/refersto.go); recall's date stage places a memory by it.
ALTER TABLE memories ADD COLUMN refers_to INTEGER;
ALTER TABLE memories ADD COLUMN refers_to_end INTEGER;

-- Existing memories get theirs from Go, in resumable batches (ltm.RunRepairs); a database
-- without memories has nothing to fill.
INSERT INTO store_repairs (name, done_at)
    SELECT 'fill-refers-to', CASE WHEN EXISTS (SELECT 1 FROM memories) THEN NULL ELSE strftime('%s', 'now') * 1000 END;
