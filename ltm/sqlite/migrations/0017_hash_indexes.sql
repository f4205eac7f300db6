-- One index keyed by content hash instead of two. A content hash is random, so every new
-- memory wrote a page at a random place of each index that began with it: memories_hash
-- (content_hash) and memories_live_hash (scope_key, content_hash), whose hashes are random
-- within a scope. At 100k memories each cost about 8 KB of log and checkpoint writes per
-- new memory. Now:
--   memories_hash_live, live rows: the duplicate check of a write (scope and hash), the
--     vectors' lookups by content, the embedding tracker's walk in hash order;
--   memories_hash_gone, forgotten rows kept for undo: written only when a memory is
--     forgotten, so a vector an undo may need is still found by its content;
--   memories_scope_live, live rows: as before plus the hash, so the vector index's check of
--     a resident scope reads ids and hashes from it; ids grow, so a new memory appends to
--     its scope's run.
-- deleted_at ends each index although the condition fixes it: SQLite reads a row to test a
-- column its index lacks, even one the index's own condition decides, and these lookups
-- are meant to read no row.
DROP INDEX memories_hash;
DROP INDEX memories_live_hash;
DROP INDEX memories_scope_live;
CREATE INDEX memories_hash_live ON memories (content_hash, scope_key, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX memories_hash_gone ON memories (content_hash, deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memories_scope_live ON memories (scope_key, id, content_hash, deleted_at) WHERE deleted_at IS NULL;
