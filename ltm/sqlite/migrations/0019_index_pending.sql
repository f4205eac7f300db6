-- A single write may leave its memory out of the full-text indexes for a moment and have it
-- indexed with others in one transaction. Each commit that writes the word index adds a
-- segment to it and merges older ones: about 60% of the pages a single write put in the log
-- (14 of 23 at 100k memories), and a third of its time. The running process keeps its
-- in-memory keyword index current on every write, so its recall does not wait.
--
-- index_pending is 1 on a memory the full-text indexes do not hold yet; the writing process
-- sets it to 0 within moments (kioku's IndexWriteDelay), any process does on opening the
-- database, and that update's trigger indexes the row. Every other writer (SQLite's
-- default, other clients) leaves it 0, and its rows are indexed in their own transaction as
-- before.
--
-- A row is in the word index when it is live and not pending; in the trigram index when,
-- besides, the rule of 0018 holds. Every trigger tests the same rule on the row it adds or
-- removes, so an entry is removed exactly when one was added.
ALTER TABLE memories ADD COLUMN index_pending INTEGER NOT NULL DEFAULT 0;
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending <> 0;

DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;

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

-- As in 0018, with "not pending" beside "live" on both sides; the trigram entry also moves
-- when the row goes in or out of the indexes (index_pending changes).
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
