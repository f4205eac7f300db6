package ltm

// Vectors are stored once per content (embeddings, keyed by content hash) and kept while
// any memory holds that content: a live one, or a forgotten one that undo may restore. The
// hash is indexed separately for the two (migration 0017): memories_hash_live and
// memories_hash_gone, both partial, so a question about every memory has to ask both, with
// each half's own condition written out for SQLite to pick its index.

// anyMemoryHashes is a subquery of the content hash of every memory, live or forgotten.
const anyMemoryHashes = `SELECT content_hash FROM memories WHERE deleted_at IS NULL
	UNION ALL SELECT content_hash FROM memories WHERE deleted_at IS NOT NULL`

// memoryHoldsHash is a condition true when a memory, live or forgotten, has the content
// hash hash (an SQL expression: a column or a parameter).
func memoryHoldsHash(hash string) string {
	return `(EXISTS (SELECT 1 FROM memories WHERE content_hash = ` + hash + ` AND deleted_at IS NULL)
		OR EXISTS (SELECT 1 FROM memories WHERE content_hash = ` + hash + ` AND deleted_at IS NOT NULL))`
}
