-- Learning controls (/kioku config learning), as on SQLite (migration 0026 there): a turn
-- said in a channel that does not learn is kept for replies and recovery but extraction
-- never reads it; turns stored before keep learning.
ALTER TABLE transcripts ADD COLUMN learn INTEGER NOT NULL DEFAULT 1;
-- Channel id → true/false for the channels a manager switched; others follow the default.
ALTER TABLE guild_settings ADD COLUMN learning_channels TEXT NOT NULL DEFAULT '{}';
