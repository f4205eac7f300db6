-- Per-user settings. Privacy is global to the user (SPEC §2).
CREATE TABLE user_settings (
    user_id      TEXT    PRIMARY KEY,
    privacy      TEXT    NOT NULL DEFAULT 'normal' CHECK (privacy IN ('normal', 'partial', 'full')),
    cross_server INTEGER NOT NULL DEFAULT 0,
    updated_at   INTEGER NOT NULL
);

-- Per-guild settings changed with /kioku config.
CREATE TABLE guild_settings (
    guild_id            TEXT    PRIMARY KEY,
    self_teaching       INTEGER NOT NULL DEFAULT 0,
    pipeline_mode       TEXT    NOT NULL DEFAULT 'full',
    auto_reply_channels TEXT    NOT NULL DEFAULT '[]',
    persona             TEXT    NOT NULL DEFAULT '',
    editor_role_id      TEXT    NOT NULL DEFAULT '',
    updated_at          INTEGER NOT NULL
);

-- Raw conversation turns, written before any model call (raw-first). user_id is the person
-- the turn belongs to: the author of a user turn, the addressee of an assistant turn.
CREATE TABLE transcripts (
    id          INTEGER PRIMARY KEY,
    guild_id    TEXT    NOT NULL DEFAULT '',
    channel_id  TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    author_name TEXT    NOT NULL DEFAULT '',
    role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT    NOT NULL,
    message_id  TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
CREATE INDEX transcripts_channel ON transcripts (guild_id, channel_id, id);
CREATE INDEX transcripts_user ON transcripts (user_id);
CREATE INDEX transcripts_created ON transcripts (created_at);

-- The background job queue (SPEC §4).
CREATE TABLE memory_jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL,
    dedup_key    TEXT    NOT NULL,
    payload      TEXT    NOT NULL DEFAULT '{}',
    state        TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    run_after    INTEGER NOT NULL,
    lease_owner  TEXT    NOT NULL DEFAULT '',
    leased_until INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX memory_jobs_dedup ON memory_jobs (kind, dedup_key) WHERE state IN ('queued', 'leased');
CREATE INDEX memory_jobs_ready ON memory_jobs (state, run_after);
