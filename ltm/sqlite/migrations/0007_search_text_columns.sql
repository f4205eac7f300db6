-- The schema works without any function of kioku's (the triggers of 0004 called the SQL
-- function kioku_search_text, so no other SQLite client could write a memory). A memory's
-- search text (memory.SearchText: NFKC-folded, lowercased, CJK text and Latin words apart) is
-- computed by kioku on write and stored next to the content; the triggers only copy it.
--
-- search_text and search_author hold the search text of content and author_name, or '' when
-- it is the text itself (plain ASCII, most memories), so nothing is stored twice. The word
-- index takes the column, or the raw text when the column is empty: a row written by another
-- client without search text is indexed for what it holds (the tokenizer folds case and
-- diacritics), and `kioku reindex` computes its search text properly.
--
-- A client that changes content (or author_name) without setting its search text leaves a
-- search text that is no longer this row's. The update trigger notices (the text changed, its
-- search text did not), indexes the raw text instead and clears the stale column, so the
-- index never holds words the row no longer has.
--
-- Rows written before this migration get their columns from the fill-search-text repair
-- (ltm/searchtext.go); until then their index entries, written by 0004, stay as they are.
ALTER TABLE memories ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN search_author TEXT NOT NULL DEFAULT '';

DROP TRIGGER memories_ai;
DROP TRIGGER memories_au;

CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memories_fts (rowid, content, author_name) VALUES (new.id,
        CASE WHEN new.search_text <> '' THEN new.search_text ELSE new.content END,
        CASE WHEN new.search_author <> '' THEN new.search_author ELSE new.author_name END);
    INSERT INTO memories_tri (rowid, content) VALUES (new.id, new.content);
END;

-- Only content, author, search text and tombstone changes touch the indexes; access tracking
-- does not, and the trigram index (content only) is touched only when the content or the
-- tombstone changes. One trigger, so the old entry is always removed before the new one is
-- added; the stale columns are cleared last, so a client with recursive triggers on
-- re-indexes the same.
CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, search_text, search_author, deleted_at ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id AND old.deleted_at IS NULL;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL
            AND (new.content IS NOT old.content OR new.deleted_at IS NOT NULL);
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id,
            CASE WHEN new.search_text <> '' AND (new.content IS old.content OR new.search_text IS NOT old.search_text)
                THEN new.search_text ELSE new.content END,
            CASE WHEN new.search_author <> '' AND (new.author_name IS old.author_name OR new.search_author IS NOT old.search_author)
                THEN new.search_author ELSE new.author_name END
        WHERE new.deleted_at IS NULL;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL
            AND (new.content IS NOT old.content OR old.deleted_at IS NOT NULL);
    UPDATE memories SET search_text = '' WHERE id = new.id AND new.search_text <> ''
        AND new.content IS NOT old.content AND new.search_text IS old.search_text;
    UPDATE memories SET search_author = '' WHERE id = new.id AND new.search_author <> ''
        AND new.author_name IS NOT old.author_name AND new.search_author IS old.search_author;
END;

-- Existing rows get their search text from Go, in resumable batches (ltm.RunRepairs); a
-- database without memories has nothing to fill.
INSERT INTO store_repairs (name, done_at)
    SELECT 'fill-search-text', CASE WHEN EXISTS (SELECT 1 FROM memories) THEN NULL ELSE strftime('%s', 'now') * 1000 END;
