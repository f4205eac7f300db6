-- Memory ids are never used twice. Without AUTOINCREMENT SQLite gives a new row the highest
-- id plus one, so after the newest memory was deleted for good (purge, forget-me, retention)
-- the next one took its number: its history rows, the notices' Undo and Edit buttons and
-- anything else that still named the old id then reached a different memory. A table's
-- AUTOINCREMENT cannot be added in place, so memories is rebuilt with the same columns, and
-- every index and trigger is created again exactly as 0019 and the migrations before it left
-- them (migrations/autoincrement_test.go compares the schema before and after).
--
-- The sequence starts above every memory id the database still names anywhere: memories,
-- their history, the keyword index's change log, evidence and graph links; a number once
-- handed out, even to a memory purged before this upgrade, is not handed out again.
--
-- The rows wait in a temporary copy while the table is dropped and created again: the new
-- table and its indexes reuse the old one's pages, so the file does not grow by the size of
-- memories. Nothing fires (SQLite drops a table's triggers before it empties it), the
-- full-text indexes keep their entries (same ids, same rows), and no other table refers to
-- memories by a foreign key.
CREATE TEMP TABLE memories_before_0022 AS SELECT * FROM memories;
DROP TABLE memories;

CREATE TABLE memories (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    scope         TEXT    NOT NULL CHECK (scope IN ('server', 'personal')),
    scope_key     TEXT    NOT NULL,
    guild_id      TEXT    NOT NULL DEFAULT '',
    user_id       TEXT    NOT NULL DEFAULT '',
    type          TEXT    NOT NULL CHECK (type IN ('fact', 'preference', 'decision', 'procedural', 'semantic', 'event')),
    content       TEXT    NOT NULL CHECK (length(content) > 0),
    normalized    TEXT    NOT NULL,
    content_hash  TEXT    NOT NULL,
    confidence    REAL    NOT NULL DEFAULT 1.0,
    importance    REAL    NOT NULL DEFAULT 0.5,
    pinned        INTEGER NOT NULL DEFAULT 0,
    tags          TEXT    NOT NULL DEFAULT '[]',
    source        TEXT    NOT NULL CHECK (source IN ('tool', 'command', 'pipeline', 'import')),
    author_id     TEXT    NOT NULL DEFAULT '',
    author_name   TEXT    NOT NULL DEFAULT '',
    channel_id    TEXT    NOT NULL DEFAULT '',
    message_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    accessed_at   INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    version       INTEGER NOT NULL DEFAULT 1,
    deleted_at    INTEGER,
    subject_id    TEXT    NOT NULL DEFAULT '',
    search_text   TEXT    NOT NULL DEFAULT '',
    search_author TEXT    NOT NULL DEFAULT '',
    index_pending INTEGER NOT NULL DEFAULT 0
);

INSERT INTO memories SELECT * FROM temp.memories_before_0022;
DROP TABLE temp.memories_before_0022;

DELETE FROM sqlite_sequence WHERE name = 'memories';
INSERT INTO sqlite_sequence (name, seq) SELECT 'memories', coalesce(max(id), 0) FROM (
    SELECT max(id) AS id FROM memories
    UNION ALL SELECT max(memory_id) FROM memory_history
    UNION ALL SELECT max(memory_id) FROM memory_changes
    UNION ALL SELECT max(memory_id) FROM memory_evidence
    UNION ALL SELECT max(memory_id) FROM memory_entities
);

CREATE INDEX memories_tombstones ON memories (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memories_subject ON memories (subject_id) WHERE subject_id <> '';
CREATE INDEX memories_author ON memories (author_id) WHERE author_id <> '';
CREATE INDEX memories_guild ON memories (guild_id);
CREATE INDEX memories_conversation ON memories (scope_key, channel_id, id) WHERE deleted_at IS NULL;
CREATE INDEX memories_pinned_live ON memories (scope_key, id) WHERE pinned <> 0 AND deleted_at IS NULL;
CREATE INDEX memories_hash_live ON memories (content_hash, scope_key, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX memories_hash_gone ON memories (content_hash, deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memories_scope_live ON memories (scope_key, id, content_hash, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending <> 0;

CREATE TRIGGER memories_pinned_ai AFTER INSERT ON memories WHEN new.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (new.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER memories_pinned_ad AFTER DELETE ON memories WHEN old.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (old.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER memories_pinned_au AFTER UPDATE OF scope_key, content, type, pinned, tags, deleted_at, version,
    author_id, author_name, channel_id, message_id, subject_id ON memories
    WHEN old.pinned <> 0 OR new.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (old.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
    INSERT INTO pinned_changes (scope_key, version) SELECT new.scope_key, 1 WHERE new.scope_key <> old.scope_key
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER memories_count_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memory_counts (scope_key, live) VALUES (new.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER memories_count_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
END;

CREATE TRIGGER memories_count_au AFTER UPDATE OF scope_key, deleted_at ON memories
    WHEN (old.deleted_at IS NULL) <> (new.deleted_at IS NULL) OR old.scope_key <> new.scope_key BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key AND old.deleted_at IS NULL;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
    INSERT INTO memory_counts (scope_key, live) SELECT new.scope_key, 1 WHERE new.deleted_at IS NULL
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER memories_graph_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_entities WHERE memory_id = old.id;
END;

CREATE TRIGGER memory_changes_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;

CREATE TRIGGER memory_changes_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (old.id);
END;

CREATE TRIGGER memory_changes_au AFTER UPDATE OF content, author_name, deleted_at, scope_key, guild_id, channel_id,
    type, pinned, importance, tags, author_id, created_at ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;

CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL AND new.index_pending = 0 BEGIN
    INSERT INTO memories_fts (rowid, content, author_name) VALUES (new.id,
        CASE WHEN new.search_text <> '' THEN new.search_text ELSE new.content END,
        CASE WHEN new.search_author <> '' THEN new.search_author ELSE new.author_name END);
    INSERT INTO memories_tri (rowid, content) SELECT new.id, new.content
        WHERE length(CAST(new.content AS BLOB)) > length(new.content)
            OR new.id <= (SELECT max_id FROM memories_tri_legacy);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL AND old.index_pending = 0 BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_tri (memories_tri, rowid, content) SELECT 'delete', old.id, old.content
        WHERE length(CAST(old.content AS BLOB)) > length(old.content)
            OR old.id <= (SELECT max_id FROM memories_tri_legacy);
END;

CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, search_text, search_author, deleted_at, index_pending ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id AND old.deleted_at IS NULL AND old.index_pending = 0;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL AND old.index_pending = 0
            AND (new.content IS NOT old.content OR new.deleted_at IS NOT NULL OR new.index_pending <> 0)
            AND (length(CAST(old.content AS BLOB)) > length(old.content)
                OR old.id <= (SELECT max_id FROM memories_tri_legacy));
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id,
            CASE WHEN new.search_text <> '' AND (new.content IS old.content OR new.search_text IS NOT old.search_text)
                THEN new.search_text ELSE new.content END,
            CASE WHEN new.search_author <> '' AND (new.author_name IS old.author_name OR new.search_author IS NOT old.search_author)
                THEN new.search_author ELSE new.author_name END
        WHERE new.deleted_at IS NULL AND new.index_pending = 0;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL AND new.index_pending = 0
            AND (new.content IS NOT old.content OR old.deleted_at IS NOT NULL OR old.index_pending <> 0)
            AND (length(CAST(new.content AS BLOB)) > length(new.content)
                OR new.id <= (SELECT max_id FROM memories_tri_legacy));
    UPDATE memories SET search_text = '' WHERE id = new.id AND new.search_text <> ''
        AND new.content IS NOT old.content AND new.search_text IS old.search_text;
    UPDATE memories SET search_author = '' WHERE id = new.id AND new.search_author <> ''
        AND new.author_name IS NOT old.author_name AND new.search_author IS old.search_author;
END;
