-- Words that travel together (ltm/comentions.go): for each scope, how many live memories hold
-- both words of a pair (a word with partner '': how many hold it), counted apart for each origin
-- guild and channel, so that a question adds up only the memories its asker may see. The
-- counts are directed (both term → partner and partner → term are stored) so that one index
-- range answers "what travels with this word".
CREATE TABLE comentions (
    scope_key  TEXT    NOT NULL,
    term       TEXT    NOT NULL,
    guild_id   TEXT    NOT NULL,
    channel_id TEXT    NOT NULL,
    partner    TEXT    NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (scope_key, term, partner, guild_id, channel_id)
) WITHOUT ROWID;
-- The pairs no memory holds any more, for a moment: counting deletes them at once.
CREATE INDEX comentions_empty ON comentions (scope_key) WHERE n <= 0;

-- What each live memory added to comentions, so that an edit, a forget or an erasure takes
-- exactly that back whatever has changed since (the words a memory takes part with, or how
-- they are chosen). A memory without a row here adds nothing. A write only marks the row
-- pending; the store counts pending memories a moment later, many at a time.
CREATE TABLE comention_memories (
    memory_id  INTEGER PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    guild_id   TEXT    NOT NULL,
    channel_id TEXT    NOT NULL,
    terms      TEXT    NOT NULL,
    -- 1 while a write changed the memory and its words wait to be counted again.
    pending    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX comention_memories_pending ON comention_memories (memory_id) WHERE pending = 1;

-- Existing memories are counted from Go, in resumable batches (ltm.RunRepairs); a database
-- without memories has nothing to count.
INSERT INTO store_repairs (name, done_at)
    SELECT 'fill-comentions', CASE WHEN EXISTS (SELECT 1 FROM memories) THEN NULL ELSE strftime('%s', 'now') * 1000 END;
