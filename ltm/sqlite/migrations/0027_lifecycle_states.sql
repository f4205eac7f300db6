-- Lifecycle states a person or the pipeline gives a memory (memory.State): '' is active
-- (past is derived from refers_to_end), 'superseded' by a newer memory, 'disputed' with
-- another, 'archived'. state_ref is the memory the state names (0 when none). Every memory
-- stored before was active, which the defaults say: no row needs a backfill.
ALTER TABLE memories ADD COLUMN state TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN state_ref INTEGER NOT NULL DEFAULT 0;
-- The review queue reads a scope's disputed memories.
CREATE INDEX memories_disputed ON memories (scope_key, id) WHERE state = 'disputed' AND deleted_at IS NULL;

-- Recall's in-memory indexes filter on the state, so a change of state is a change they
-- must learn (keywordindex.go reads memory_changes).
DROP TRIGGER memory_changes_au;
CREATE TRIGGER memory_changes_au AFTER UPDATE OF content, author_name, deleted_at, scope_key, guild_id, channel_id,
    type, pinned, importance, tags, author_id, created_at, state ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;

-- The review queue: a review_needed history row waits until someone settles it (keeps,
-- replaces, merges or forgets), which stamps reviewed_at. Rows written before were never
-- settled and wait too.
ALTER TABLE memory_history ADD COLUMN reviewed_at INTEGER;
CREATE INDEX memory_history_review ON memory_history (scope_key, id) WHERE action = 'review_needed' AND reviewed_at IS NULL;
