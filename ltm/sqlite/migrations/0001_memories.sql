-- Long-term memories (SPEC §2). Times are Unix milliseconds (UTC).
-- scope_key is 'g:<guild>' for server memory and 'u:<user>' for personal memory; every
-- query filters on it, and dedup is unique per scope_key among live rows.
CREATE TABLE memories (
    id            INTEGER PRIMARY KEY,
    scope         TEXT    NOT NULL CHECK (scope IN ('server', 'personal')),
    scope_key     TEXT    NOT NULL,
    guild_id      TEXT    NOT NULL DEFAULT '',
    user_id       TEXT    NOT NULL DEFAULT '',
    type          TEXT    NOT NULL CHECK (type IN ('fact', 'preference', 'decision', 'procedural', 'semantic', 'event')),
    content       TEXT    NOT NULL CHECK (length(content) > 0),
    normalized    TEXT    NOT NULL,
    content_hash  TEXT    NOT NULL,
    confidence    REAL    NOT NULL DEFAULT 1.0,
    importance    REAL    NOT NULL DEFAULT 0.5,
    pinned        INTEGER NOT NULL DEFAULT 0,
    tags          TEXT    NOT NULL DEFAULT '[]',
    source        TEXT    NOT NULL CHECK (source IN ('tool', 'command', 'pipeline', 'import')),
    author_id     TEXT    NOT NULL DEFAULT '',
    author_name   TEXT    NOT NULL DEFAULT '',
    channel_id    TEXT    NOT NULL DEFAULT '',
    message_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    accessed_at   INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    version       INTEGER NOT NULL DEFAULT 1,
    deleted_at    INTEGER
);

CREATE UNIQUE INDEX memories_live_hash ON memories (scope_key, content_hash) WHERE deleted_at IS NULL;
CREATE INDEX memories_scope_live ON memories (scope_key, id) WHERE deleted_at IS NULL;
CREATE INDEX memories_tombstones ON memories (deleted_at) WHERE deleted_at IS NOT NULL;

-- Full-text indexes hold live rows only, so a deleted memory can never match a search.
-- memories_fts stems English words (porter over unicode61); memories_tri indexes character
-- trigrams so Japanese and other unsegmented scripts are searchable.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, author_name,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_tri USING fts5 (
    content,
    content = 'memories', content_rowid = 'id',
    tokenize = 'trigram'
);

CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memories_fts (rowid, content, author_name) VALUES (new.id, new.content, new.author_name);
    INSERT INTO memories_tri (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, author_name) VALUES ('delete', old.id, old.content, old.author_name);
    INSERT INTO memories_tri (memories_tri, rowid, content) VALUES ('delete', old.id, old.content);
END;

-- Only content, author and tombstone changes touch the indexes; access tracking does not.
-- One trigger, so the old entry is always removed before the new one is added.
CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, deleted_at ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, author_name)
        SELECT 'delete', old.id, old.content, old.author_name WHERE old.deleted_at IS NULL;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL;
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id, new.content, new.author_name WHERE new.deleted_at IS NULL;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL;
END;

-- Embeddings are keyed by content hash and model, so identical content in two scopes or a
-- re-created memory reuses one vector, and changing the model re-embeds without clashes.
CREATE TABLE embeddings (
    content_hash TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (content_hash, model)
) WITHOUT ROWID;

-- The audit trail: every mutation and every pipeline proposal (SPEC §2 "Audit").
CREATE TABLE memory_history (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER,
    scope_key   TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    old_content TEXT    NOT NULL DEFAULT '',
    new_content TEXT    NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 0,
    actor       TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history (memory_id, id);
CREATE INDEX memory_history_created ON memory_history (created_at);

-- Pending confirmations (forget by query, forget me): a preview stores what it showed, and
-- only its token executes exactly that.
CREATE TABLE confirmations (
    token      TEXT    PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    actor      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
