-- The embedding tracker finds live memories without a vector of the configured model. The
-- embeddings table keeps each vector in its primary-key b-tree, so probing it per memory
-- reads pages full of vectors; this index holds only the keys, so the check reads a few
-- megabytes at a million memories instead of the vectors. Its columns are the primary key's,
-- in the same order, so no query that reads vectors prefers it to the table.
CREATE INDEX embeddings_keys ON embeddings (content_hash, model);
