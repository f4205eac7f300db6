-- The pinned memories of a scope, which every chat turn puts in its prompt (through a cache
-- that reloads them when they change or after a minute). Without an index of its own the
-- lookup walked the scope's live rows and read each one's pinned flag: at 100k memories a
-- turn after a reload waited 30-130 ms for it. A partial index holds only pinned rows, so
-- ordinary writes do not maintain it.
CREATE INDEX memories_pinned_live ON memories (scope_key, id) WHERE pinned <> 0 AND deleted_at IS NULL;
