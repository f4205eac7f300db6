-- Vectors move to an ordinary rowid table. In the WITHOUT ROWID table of 0001 a 384-dim
-- vector (1,536 bytes) is larger than an index-style b-tree keeps on a page, so each row
-- kept about 500 bytes on its leaf and spilled the rest to an overflow page of its own:
-- about 4.8 KB of file per vector, and every stored vector dirtied two pages at a random
-- place of the tree. A rowid table keeps the whole row on its leaf (two vectors per page),
-- new vectors append at the end of the table, and the key-only unique index below finds a
-- vector by content hash and model as the primary key did: about 2.2 KB per vector, and
-- a bulk write stores its vectors at roughly half the page writes.
--
-- The columns, their meaning and every query stay the same; embeddings_keys, which the
-- embedding tracker names, becomes the unique index that upserts conflict on.
--
-- The vectors wait in a temporary table while the old table is dropped, so the new table
-- and its index take the pages the old ones free and a new database keeps no free page.
CREATE TEMP TABLE embeddings_copy AS
    SELECT content_hash, model, dims, vector, created_at FROM embeddings ORDER BY content_hash, model;
DROP TABLE embeddings;
CREATE TABLE embeddings (
    content_hash TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX embeddings_keys ON embeddings (content_hash, model);
INSERT INTO embeddings (content_hash, model, dims, vector, created_at)
    SELECT content_hash, model, dims, vector, created_at FROM temp.embeddings_copy ORDER BY rowid;
DROP TABLE temp.embeddings_copy;
