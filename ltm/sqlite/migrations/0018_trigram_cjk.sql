-- The trigram index holds what only it can find: text with characters beyond ASCII (CJK,
-- which has no spaces between words, above all). A plain-ASCII memory is found by the word
-- index, and the trigram index is only ever asked for trigrams of CJK text, which no ASCII
-- text contains; yet its entry was most of the cost of writing a memory (about a hundred
-- trigrams each, merged again and again as the index grows).
--
-- A row is in the trigram index when it is live and
--   its content is longer in bytes than in characters (a character beyond ASCII), or
--   its id is at most memories_tri_legacy.max_id: rows written before this migration keep the
--   entries they have, so upgrading rewrites nothing. `kioku reindex` rebuilds the index by
--   the first rule alone and sets max_id to 0.
-- Every trigger below tests that same rule on the row it adds or removes, so an entry is
-- removed exactly when one was added: a 'delete' of an entry that is not there would break
-- the index.
CREATE TABLE memories_tri_legacy (
    max_id INTEGER NOT NULL
);
INSERT INTO memories_tri_legacy (max_id) SELECT coalesce(max(id), 0) FROM memories;

DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;

CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memories_fts (rowid, content, author_name) VALUES (new.id,
        CASE WHEN new.search_text <> '' THEN new.search_text ELSE new.content END,
        CASE WHEN new.search_author <> '' THEN new.search_author ELSE new.author_name END);
    INSERT INTO memories_tri (rowid, content) SELECT new.id, new.content
        WHERE length(CAST(new.content AS BLOB)) > length(new.content)
            OR new.id <= (SELECT max_id FROM memories_tri_legacy);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_tri (memories_tri, rowid, content) SELECT 'delete', old.id, old.content
        WHERE length(CAST(old.content AS BLOB)) > length(old.content)
            OR old.id <= (SELECT max_id FROM memories_tri_legacy);
END;

-- As in 0007, with the trigram rule on both sides.
CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, search_text, search_author, deleted_at ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id AND old.deleted_at IS NULL;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL
            AND (new.content IS NOT old.content OR new.deleted_at IS NOT NULL)
            AND (length(CAST(old.content AS BLOB)) > length(old.content)
                OR old.id <= (SELECT max_id FROM memories_tri_legacy));
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id,
            CASE WHEN new.search_text <> '' AND (new.content IS old.content OR new.search_text IS NOT old.search_text)
                THEN new.search_text ELSE new.content END,
            CASE WHEN new.search_author <> '' AND (new.author_name IS old.author_name OR new.search_author IS NOT old.search_author)
                THEN new.search_author ELSE new.author_name END
        WHERE new.deleted_at IS NULL;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL
            AND (new.content IS NOT old.content OR old.deleted_at IS NOT NULL)
            AND (length(CAST(new.content AS BLOB)) > length(new.content)
                OR new.id <= (SELECT max_id FROM memories_tri_legacy));
    UPDATE memories SET search_text = '' WHERE id = new.id AND new.search_text <> ''
        AND new.content IS NOT old.content AND new.search_text IS old.search_text;
    UPDATE memories SET search_author = '' WHERE id = new.id AND new.search_author <> ''
        AND new.author_name IS NOT old.author_name AND new.search_author IS old.search_author;
END;
