-- What a writer sees (SPEC §2 "Visibility decides everything a writer sees").

-- Dedup is per writer, not per scope: a save deduplicates only against the live memories of
-- the scope that its writer may see where they write, and otherwise inserts a fresh row like
-- any save. Two live rows of one scope may therefore hold the same content (e.g. a member's
-- DM-origin fact and the same fact saved about them in a guild by someone else), so the live
-- hash index is no longer unique; ltm enforces dedup in Go inside the single-writer
-- transaction.
DROP INDEX memories_live_hash;
CREATE INDEX memories_live_hash ON memories (scope_key, content_hash) WHERE deleted_at IS NULL;

-- A per-scope counter of changes to pinned memories. Pinned memories are injected into every
-- turn and cached by the chat engine; the cache compares this counter (one primary-key read)
-- before serving, so a pinned memory forgotten, edited or unpinned by any path (commands, the
-- CLI in another process, tools, the pipeline, forget-me, retention) leaves prompts at once.
-- The triggers fire only for rows that are or were pinned, and not for access tracking or
-- decay, so ordinary writes never invalidate the cache.
CREATE TABLE pinned_changes (
    scope_key TEXT    PRIMARY KEY,
    version   INTEGER NOT NULL
) WITHOUT ROWID;

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
