-- The pinned memories of a scope, which every chat turn's prompt cache reloads when they
-- change (ltm's migration 0016): a partial index of the pinned rows only, so the lookup does
-- not walk the scope and ordinary writes do not maintain it.
CREATE INDEX memories_pinned_live ON memories (scope_key, id) WHERE pinned <> 0 AND deleted_at IS NULL;
