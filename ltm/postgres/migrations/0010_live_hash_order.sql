-- The duplicate check of every write (findLiveByHash: the oldest live memory of a scope with
-- a content hash) gets an index that answers it in one descent and in id order. With
-- (scope_key, content_hash) alone the rows it found needed a sort, and a planner without
-- statistics (a fresh or bulk-loaded table autovacuum has not analyzed yet) counted the
-- scope's walk in id order (memories_scope_live) as cheaper; a connection that cached that
-- plan read the whole scope on every write, and writes slowed as the scope grew (30/s at
-- 80,000 memories). The id ends the key, so the index still lists a scope's ids and hashes
-- for the vector index's check of a resident scope.
DROP INDEX memories_live_hash;
CREATE INDEX memories_live_hash ON memories (scope_key, content_hash, id) WHERE deleted_at IS NULL;
