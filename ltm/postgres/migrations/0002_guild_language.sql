-- The language of the messages kioku posts in a server's channels (/kioku config language),
-- as SQLite's migration 0013: auto follows the server's preferred locale.
ALTER TABLE guild_settings ADD COLUMN language TEXT NOT NULL DEFAULT 'auto'
    CHECK (language IN ('auto', 'en', 'ja'));
