-- The word index holds each memory's search text (memory.SearchText, the SQL function
-- kioku_search_text): NFKC-folded and lowercased, with CJK text and Latin words apart, so an
-- English query finds "ＡＰＩ" and "明日のdeployは". It is contentless: what it indexes is not
-- a column of memories, so rows are removed by rowid (contentless_delete) rather than by
-- repeating the indexed text.
DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
DROP TABLE memories_fts;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, author_name,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (rowid, content, author_name)
    SELECT id, kioku_search_text(content), kioku_search_text(author_name) FROM memories WHERE deleted_at IS NULL;

CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memories_fts (rowid, content, author_name)
        VALUES (new.id, kioku_search_text(new.content), kioku_search_text(new.author_name));
    INSERT INTO memories_tri (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_tri (memories_tri, rowid, content) VALUES ('delete', old.id, old.content);
END;

-- Only content, author and tombstone changes touch the indexes; access tracking does not.
-- One trigger, so the old entry is always removed before the new one is added.
CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, deleted_at ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id AND old.deleted_at IS NULL;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL;
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id, kioku_search_text(new.content), kioku_search_text(new.author_name) WHERE new.deleted_at IS NULL;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL;
END;
