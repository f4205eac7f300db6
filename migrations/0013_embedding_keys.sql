-- The embedding tracker finds live memories without a vector of the configured model. The
-- embeddings table keeps each vector in its primary-key b-tree, so probing it per memory
-- reads pages full of vectors; this index holds only the keys, so the check reads a few
-- megabytes at a million memories instead of the vectors.
CREATE INDEX embeddings_model_hash ON embeddings (model, content_hash);
