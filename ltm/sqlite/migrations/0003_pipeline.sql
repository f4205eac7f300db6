-- The background pipeline's own state (SPEC §4). Times are Unix milliseconds (UTC).

-- How far conversation extraction has read each channel's transcript. A job advances the
-- cursor in the same transaction that writes its facts, and only if the cursor still holds
-- the value the job started from, so a re-run never extracts the same turns twice.
CREATE TABLE pipeline_cursors (
    guild_id     TEXT    NOT NULL,
    channel_id   TEXT    NOT NULL,
    last_turn_id INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
) WITHOUT ROWID;

-- The latest run of each scheduled task, for `kioku doctor` and /kioku status, which run in
-- other processes than the worker.
CREATE TABLE pipeline_runs (
    name        TEXT    PRIMARY KEY,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    ok          INTEGER NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    detail      TEXT    NOT NULL DEFAULT '',
    runs        INTEGER NOT NULL DEFAULT 0,
    failures    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Jobs are reaped by expired lease and purged by age.
CREATE INDEX memory_jobs_leased ON memory_jobs (leased_until) WHERE state = 'leased';
CREATE INDEX memory_jobs_finished ON memory_jobs (state, updated_at) WHERE state IN ('done', 'dead');

-- Retention finds the embeddings no memory uses any more by content hash.
CREATE INDEX memories_hash ON memories (content_hash);
