-- Cheaper triggers on every write. A memory's insert ran two triggers whose general paths
-- cost more than the row itself: the live count also tried to delete its scope's row after
-- every increment (only a decrement can empty it), and the change notice aggregated, ranked
-- and grouped the transition table to send what for one row is one notice. Both now take
-- the short path when it applies; what they send and count is unchanged.
CREATE OR REPLACE FUNCTION kioku_count_live(key TEXT, delta INTEGER) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_counts (scope_key, live) VALUES (key, delta)
        ON CONFLICT (scope_key) DO UPDATE SET live = memory_counts.live + delta;
    IF delta < 0 THEN
        DELETE FROM memory_counts WHERE scope_key = key AND live <= 0;
    END IF;
END $$;

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
                    o.importance, o.tags, o.author_id, o.created_at)
                IS DISTINCT FROM (n.scope_key, n.content_hash, n.deleted_at, n.guild_id, n.channel_id, n.type, n.pinned,
                    n.importance, n.tags, n.author_id, n.created_at)
            UNION ALL
            SELECT o.scope_key, o.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE o.scope_key <> n.scope_key) c;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM kioku_notify_memory_ids(kioku_change_channel(TG_TABLE_SCHEMA), keys, ids);
    END IF;
    RETURN NULL;
END $$;
