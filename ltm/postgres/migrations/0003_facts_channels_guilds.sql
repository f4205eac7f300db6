-- What the running bot keeps besides memories (SQLite's migrations 0005, 0009 and 0013):
-- the shape of each guild's channels, the servers it left and those it welcomed, and the
-- daily model-call counts. Only ids, permission bits, times and counts: nothing anyone said.

-- What kioku last saw of each guild channel's visibility, so that a memory learned in a
-- channel that was since deleted keeps that channel's rule (who could not see it still can't).
CREATE TABLE guild_channels (
    guild_id       TEXT    NOT NULL,
    channel_id     TEXT    NOT NULL,
    parent_id      TEXT    NOT NULL DEFAULT '',
    kind           INTEGER NOT NULL DEFAULT 0,
    private_thread INTEGER NOT NULL DEFAULT 0,
    overwrites     TEXT    NOT NULL DEFAULT '[]',
    deleted_at     BIGINT,
    updated_at     BIGINT  NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
);

-- Servers the bot was removed from; their data is purged after purge_after unless the bot
-- comes back first.
CREATE TABLE guild_departures (
    guild_id    TEXT    PRIMARY KEY,
    left_at     BIGINT  NOT NULL,
    purge_after BIGINT  NOT NULL
);
CREATE INDEX guild_departures_due ON guild_departures (purge_after);

-- Servers kioku has introduced itself to: a row makes the welcome note a one-time thing,
-- whichever process handles the server's GUILD_CREATE.
CREATE TABLE guild_onboarding (
    guild_id   TEXT    PRIMARY KEY,
    greeted_at BIGINT  NOT NULL
);

-- Servers the store already holds data about count as introduced, as on SQLite: a store
-- filled before this migration must not greet every server it has served.
INSERT INTO guild_onboarding (guild_id, greeted_at)
    SELECT guild_id, 0 FROM guild_settings
    UNION SELECT guild_id, 0 FROM memories WHERE guild_id <> ''
    UNION SELECT guild_id, 0 FROM transcripts WHERE guild_id <> '';

-- Model calls per server ("g:" and a guild id) or member's DMs ("dm:" and a DM channel id)
-- on the current UTC day, for the daily model budget every process shares.
CREATE TABLE model_calls (
    budget_key TEXT    PRIMARY KEY,
    day        TEXT    NOT NULL,
    calls      INTEGER NOT NULL
);
