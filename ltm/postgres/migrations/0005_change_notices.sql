-- Change notices for the processes that share this database (LISTEN/NOTIFY, docs/postgres.md
-- "Change notices"): each process keeps state in memory (the vector index of the scopes it
-- queried, its query vector cache, the short-term memory of its shards) that a write by
-- another process must reach. Triggers notify on the channel 'kioku_changes:<schema>' (one
-- per schema, so stores in two schemas of one database don't hear each other; see
-- kioku_change_channel). Payloads name ids and scope keys only, never content:
--
--   m <id,id,…> <scope key>    memories changed (written, edited, forgotten, erased, moved,
--                              or given a vector); 300 ids at most per notice
--   f <unix ms> <user id>      a member's forget-me fence
--   u <user id>                a member's settings changed
--   g <guild id>               a server's settings changed
--
-- Access counts (a recall's bookkeeping) notify nothing. A notice is sent when its
-- transaction commits, in commit order.

-- kioku_change_channel is the channel of the store in schema: channel names are at most 63
-- bytes, so a long schema name is replaced by its md5.
CREATE FUNCTION kioku_change_channel(schema TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN octet_length('kioku_changes:' || schema) <= 63 THEN 'kioku_changes:' || schema
        ELSE 'kioku_changes:' || md5(schema) END;
$$;

-- kioku_notify_memory_ids sends the "m" notices of the memories ids in the scopes keys
-- (pairwise), grouped by scope.
CREATE FUNCTION kioku_notify_memory_ids(chan TEXT, keys TEXT[], ids BIGINT[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(chan, 'm ' || string_agg(c.id::text, ',' ORDER BY c.id) || ' ' || c.key)
    FROM (SELECT d.key, d.id, (row_number() OVER (PARTITION BY d.key ORDER BY d.id) - 1) / 300 AS part
        FROM (SELECT DISTINCT u.key, u.id FROM unnest(keys, ids) AS u(key, id)) d) c
    GROUP BY c.key, c.part;
END $$;

-- One notice per scope and statement (a bulk import or a forget-me is one statement, not
-- thousands of notices); an update notifies only when what recall keeps about a memory
-- changed, in the old and the new scope.
CREATE FUNCTION kioku_memories_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    keys TEXT[];
    ids  BIGINT[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(scope_key), array_agg(id) INTO keys, ids FROM new_rows;
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

CREATE TRIGGER memories_notify_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_memories_notify();
CREATE TRIGGER memories_notify_update AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_memories_notify();
CREATE TRIGGER memories_notify_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_memories_notify();

-- A vector stored for a content (by the writer after its commit, by another process's
-- embedding tracker) is news for the live memories holding that content.
CREATE FUNCTION kioku_embeddings_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    keys TEXT[];
    ids  BIGINT[];
BEGIN
    SELECT array_agg(m.scope_key), array_agg(m.id) INTO keys, ids FROM memories m
        WHERE m.deleted_at IS NULL AND m.content_hash IN (SELECT content_hash FROM new_rows);
    IF ids IS NOT NULL THEN
        PERFORM kioku_notify_memory_ids(kioku_change_channel(TG_TABLE_SCHEMA), keys, ids);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER embeddings_notify_insert AFTER INSERT ON embeddings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_embeddings_notify();
CREATE TRIGGER embeddings_notify_update AFTER UPDATE ON embeddings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_embeddings_notify();

CREATE FUNCTION kioku_fences_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'f ' || NEW.forgotten_at || ' ' || NEW.user_id);
    RETURN NULL;
END $$;

CREATE TRIGGER forget_fences_notify AFTER INSERT OR UPDATE ON forget_fences
    FOR EACH ROW EXECUTE FUNCTION kioku_fences_notify();

CREATE FUNCTION kioku_settings_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'user_settings' THEN
        PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'u ' || r.user_id);
    ELSE
        PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'g ' || r.guild_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER user_settings_notify AFTER INSERT OR UPDATE OR DELETE ON user_settings
    FOR EACH ROW EXECUTE FUNCTION kioku_settings_notify();
CREATE TRIGGER guild_settings_notify AFTER INSERT OR UPDATE OR DELETE ON guild_settings
    FOR EACH ROW EXECUTE FUNCTION kioku_settings_notify();
