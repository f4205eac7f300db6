-- Abuse limits (README "Limits").

-- Live memories per scope, for the per-server and per-member caps. A write checks the cap
-- inside its transaction; counting the scope's live rows there would read the whole scope's
-- index (tens of milliseconds for a 100,000-memory server, on the one writer connection), so
-- the triggers keep the count as rows are created, forgotten, recovered, moved and erased, by
-- any path and any client. A scope whose count reaches zero loses its row, so nothing of a
-- scope that holds nothing (a member after forget-me) stays behind. Only keys and counts.
CREATE TABLE memory_counts (
    scope_key TEXT    PRIMARY KEY,
    live      INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO memory_counts (scope_key, live)
    SELECT scope_key, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY scope_key;

CREATE TRIGGER memories_count_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memory_counts (scope_key, live) VALUES (new.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER memories_count_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
END;

CREATE TRIGGER memories_count_au AFTER UPDATE OF scope_key, deleted_at ON memories
    WHEN (old.deleted_at IS NULL) <> (new.deleted_at IS NULL) OR old.scope_key <> new.scope_key BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key AND old.deleted_at IS NULL;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
    INSERT INTO memory_counts (scope_key, live) SELECT new.scope_key, 1 WHERE new.deleted_at IS NULL
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;

-- Model calls per server (or per member's DMs) on the current UTC day, for the daily model
-- budget that chat turns and the background pipeline share. One row per budget key ("g:"
-- and a guild id, or "dm:" and a DM channel id); a call on a later day starts the count
-- afresh. Only ids, a date and a count.
CREATE TABLE model_calls (
    budget_key TEXT    PRIMARY KEY,
    day        TEXT    NOT NULL,
    calls      INTEGER NOT NULL
) WITHOUT ROWID;
