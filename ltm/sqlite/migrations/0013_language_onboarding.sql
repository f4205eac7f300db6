-- The language of the messages kioku posts in a server's channels (/kioku config language):
-- auto follows the server's preferred locale, en and ja force one.
ALTER TABLE guild_settings ADD COLUMN language TEXT NOT NULL DEFAULT 'auto'
    CHECK (language IN ('auto', 'en', 'ja'));

-- Servers kioku has introduced itself to. Discord sends GUILD_CREATE for every server on
-- every connect; a row here makes the welcome note a one-time thing. Only ids and a time.
CREATE TABLE guild_onboarding (
    guild_id   TEXT    PRIMARY KEY,
    greeted_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Servers kioku was already in before this version count as introduced: an upgrade must not
-- greet every server it has served for months. Any trace of a server is enough.
INSERT INTO guild_onboarding (guild_id, greeted_at)
    SELECT guild_id, 0 FROM guild_settings
    UNION SELECT guild_id, 0 FROM guild_channels
    UNION SELECT guild_id, 0 FROM memories WHERE guild_id <> ''
    UNION SELECT guild_id, 0 FROM transcripts WHERE guild_id <> '';
