-- Trust (SPEC §2): who a memory is about, what it was learned from, where it may be used,
-- and the bookkeeping that makes forget-me, deleted messages and a departed server complete.

-- The member a memory is about when that matters beyond its scope key: a server fact about one
-- member, a Remember-this copy of another member's message. Forget-me removes such memories.
ALTER TABLE memories ADD COLUMN subject_id TEXT NOT NULL DEFAULT '';
CREATE INDEX memories_subject ON memories (subject_id) WHERE subject_id <> '';
CREATE INDEX memories_author ON memories (author_id) WHERE author_id <> '';
CREATE INDEX memories_guild ON memories (guild_id);

-- The Discord messages a memory was learned from. A pipeline memory whose every evidence
-- message was deleted is soft-deleted; a memory whose only evidence is one member's messages
-- goes with that member's forget-me. Deliberate saves record their message too.
CREATE TABLE memory_evidence (
    memory_id  INTEGER NOT NULL,
    message_id TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    PRIMARY KEY (memory_id, message_id)
) WITHOUT ROWID;
CREATE INDEX memory_evidence_message ON memory_evidence (message_id);
CREATE INDEX memory_evidence_user ON memory_evidence (user_id);

-- Forget-me fences in-flight pipeline work: a job that started before a member's forget-me
-- writes nothing about that member. Only ids and times are kept, and only as long as a job
-- can run (retention removes old fences).
CREATE TABLE forget_fences (
    user_id      TEXT    PRIMARY KEY,
    forgotten_at INTEGER NOT NULL
) WITHOUT ROWID;

-- What kioku last saw of each guild channel's visibility, so that a memory learned in a
-- channel that was since deleted keeps that channel's rule (who could not see it still can't).
CREATE TABLE guild_channels (
    guild_id       TEXT    NOT NULL,
    channel_id     TEXT    NOT NULL,
    parent_id      TEXT    NOT NULL DEFAULT '',
    kind           INTEGER NOT NULL DEFAULT 0,
    private_thread INTEGER NOT NULL DEFAULT 0,
    overwrites     TEXT    NOT NULL DEFAULT '[]',
    deleted_at     INTEGER,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
) WITHOUT ROWID;

-- Servers the bot was removed from; their data is purged after purge_after unless the bot
-- comes back first.
CREATE TABLE guild_departures (
    guild_id    TEXT    PRIMARY KEY,
    left_at     INTEGER NOT NULL,
    purge_after INTEGER NOT NULL
) WITHOUT ROWID;

-- One-time repairs of data written by older versions (secret re-scan, job content, vacuum),
-- resumable: cursor is the last row id a repair finished.
CREATE TABLE store_repairs (
    name    TEXT    PRIMARY KEY,
    cursor  INTEGER NOT NULL DEFAULT 0,
    done_at INTEGER
) WITHOUT ROWID;
INSERT INTO store_repairs (name) VALUES ('redact-secrets'), ('strip-job-content'), ('vacuum-freed-pages');

-- Deleting a row from a full-text index only marks its entry unless secure-delete is on;
-- with it, the words leave the index's pages at once.
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memories_tri (memories_tri, rank) VALUES ('secure-delete', 1);
