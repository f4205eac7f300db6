-- The change log of memories: one row per insert, delete or update of anything the keyword
-- index holds (text, author, scope, the fields recall filters on), written by triggers so
-- that every writer is covered, including other processes on the same file (the CLI,
-- `kioku chat`, imports, another client). Each process's in-memory keyword index reads the
-- rows after the last sequence number it applied before it answers a query. It holds only
-- ids: no words, nothing forget-me must reach. Retention trims old rows; a process that
-- finds rows it missed trimmed rebuilds its indexes.
CREATE TABLE memory_changes (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL
);

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
