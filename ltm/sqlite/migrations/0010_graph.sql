-- The knowledge graph (SPEC §4): the entities memories mention, their aliases, the relations
-- the pipeline's extraction finds between them, and which memory mentions which entity.
-- Everything is keyed by the same scope keys as memories ("g:<guild>", "u:<user>"), and
-- every read filters on it, so one scope's graph is never seen from another.
--
-- An entity's mentions count its memory links and the mentions of its relations; triggers
-- keep the count whatever deletes the rows (a purge, forget-me, a guild purge), so an entity
-- nothing mentions any more has mentions <= 0 and retention collects it.

CREATE TABLE entities (
    id         INTEGER PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    normalized TEXT    NOT NULL,
    kind       TEXT    NOT NULL DEFAULT 'other',
    -- The member a person entity is, when a Discord mention or a display name tied it to
    -- one; forget-me removes the member's entities by this id. Names never set it alone.
    user_id    TEXT    NOT NULL DEFAULT '',
    mentions   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX entities_name ON entities (scope_key, normalized);
CREATE UNIQUE INDEX entities_member ON entities (scope_key, user_id) WHERE user_id <> '';
CREATE INDEX entities_user ON entities (user_id) WHERE user_id <> '';
CREATE INDEX entities_top ON entities (scope_key, mentions);
CREATE INDEX entities_orphan ON entities (id) WHERE mentions <= 0;

-- The normalized names an entity is found by: its own, nicknames, spellings, display names.
CREATE TABLE entity_aliases (
    entity_id INTEGER NOT NULL,
    scope_key TEXT    NOT NULL,
    alias     TEXT    NOT NULL,
    PRIMARY KEY (entity_id, alias)
) WITHOUT ROWID;
CREATE INDEX entity_aliases_lookup ON entity_aliases (scope_key, alias);

-- Relations between two entities of one scope from the extraction's triples, with how often
-- they were seen and the running average of the model's confidence.
CREATE TABLE relations (
    id         INTEGER PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    source_id  INTEGER NOT NULL,
    target_id  INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    mentions   INTEGER NOT NULL DEFAULT 1,
    confidence REAL    NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX relations_edge ON relations (source_id, target_id, type);
CREATE INDEX relations_target ON relations (target_id);
CREATE INDEX relations_scope ON relations (scope_key);

-- Whose messages a relation was learned from (user ids only): a relation learned only from
-- one member's words goes with that member's forget-me, as a memory does.
CREATE TABLE relation_sources (
    relation_id INTEGER NOT NULL,
    user_id     TEXT    NOT NULL,
    PRIMARY KEY (relation_id, user_id)
) WITHOUT ROWID;
CREATE INDEX relation_sources_user ON relation_sources (user_id);

-- Which memory mentions which entity.
CREATE TABLE memory_entities (
    memory_id INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_entities_entity ON memory_entities (entity_id);

CREATE TRIGGER memory_entities_ai AFTER INSERT ON memory_entities BEGIN
    UPDATE entities SET mentions = mentions + 1 WHERE id = new.entity_id;
END;
CREATE TRIGGER memory_entities_ad AFTER DELETE ON memory_entities BEGIN
    UPDATE entities SET mentions = mentions - 1 WHERE id = old.entity_id;
END;
CREATE TRIGGER relations_ai AFTER INSERT ON relations BEGIN
    UPDATE entities SET mentions = mentions + new.mentions WHERE id IN (new.source_id, new.target_id);
END;
CREATE TRIGGER relations_au AFTER UPDATE OF mentions ON relations BEGIN
    UPDATE entities SET mentions = mentions + new.mentions - old.mentions WHERE id IN (new.source_id, new.target_id);
END;
CREATE TRIGGER relations_ad AFTER DELETE ON relations BEGIN
    UPDATE entities SET mentions = mentions - old.mentions WHERE id IN (old.source_id, old.target_id);
    DELETE FROM relation_sources WHERE relation_id = old.id;
END;
-- An entity takes its aliases, links and relations with it.
CREATE TRIGGER entities_ad AFTER DELETE ON entities BEGIN
    DELETE FROM entity_aliases WHERE entity_id = old.id;
    DELETE FROM memory_entities WHERE entity_id = old.id;
    DELETE FROM relations WHERE source_id = old.id OR target_id = old.id;
END;
-- A memory deleted by any path takes its links with it.
CREATE TRIGGER memories_graph_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_entities WHERE memory_id = old.id;
END;

-- Existing memories are linked from Go, in resumable batches (ltm.RunRepairs); a database
-- without memories has nothing to link.
INSERT INTO store_repairs (name, done_at)
    SELECT 'link-graph', CASE WHEN EXISTS (SELECT 1 FROM memories) THEN NULL ELSE strftime('%s', 'now') * 1000 END;
