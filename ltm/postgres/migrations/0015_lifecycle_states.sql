-- Lifecycle states a person or the pipeline gives a memory, as on SQLite (migration 0027
-- there): '' active, 'superseded', 'disputed', 'archived'; state_ref names the memory the
-- state refers to (0 when none). Columns with constant defaults: adding them rewrites no row,
-- and every memory stored before was active.
ALTER TABLE memories ADD COLUMN state TEXT NOT NULL DEFAULT '', ADD COLUMN state_ref BIGINT NOT NULL DEFAULT 0;
CREATE INDEX memories_disputed ON memories (scope_key, id) WHERE state = 'disputed' AND deleted_at IS NULL;

-- Recall's in-memory indexes in every process filter on the state, so a change of state is
-- news for them: the change notice now compares it too (otherwise as in migration 0011).
CREATE OR REPLACE FUNCTION kioku_memories_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    keys TEXT[];
    ids  BIGINT[];
    written   BIGINT;
    first_key TEXT;
    first_id  BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- One memory written (a remember, a pipeline ADD): its notice directly.
        SELECT count(*), min(r.scope_key), min(r.id) INTO written, first_key, first_id FROM new_rows r;
        IF written = 1 THEN
            PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'm ' || first_id || ' ' || first_key);
            RETURN NULL;
        END IF;
        SELECT array_agg(r.scope_key), array_agg(r.id) INTO keys, ids FROM new_rows r;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(scope_key), array_agg(id) INTO keys, ids FROM old_rows;
    ELSE
        SELECT array_agg(c.key), array_agg(c.id) INTO keys, ids FROM (
            SELECT n.scope_key AS key, n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE (o.scope_key, o.content_hash, o.deleted_at, o.guild_id, o.channel_id, o.type, o.pinned,
                    o.importance, o.tags, o.author_id, o.created_at, o.state)
                IS DISTINCT FROM (n.scope_key, n.content_hash, n.deleted_at, n.guild_id, n.channel_id, n.type, n.pinned,
                    n.importance, n.tags, n.author_id, n.created_at, n.state)
            UNION ALL
            SELECT o.scope_key, o.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE o.scope_key <> n.scope_key) c;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM kioku_notify_memory_ids(kioku_change_channel(TG_TABLE_SCHEMA), keys, ids);
    END IF;
    RETURN NULL;
END $$;

-- The review queue, as on SQLite: a review_needed row waits until someone settles it, which
-- stamps reviewed_at.
ALTER TABLE memory_history ADD COLUMN reviewed_at BIGINT;
CREATE INDEX memory_history_review ON memory_history (scope_key, id) WHERE action = 'review_needed' AND reviewed_at IS NULL;
