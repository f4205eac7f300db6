-- Learning controls (/kioku config learning): a turn said in a channel that does not learn
-- is kept for replies and recovery (raw-first) but extraction never reads it. Turns stored
-- before this migration were all said where kioku learned, so they keep learning.
ALTER TABLE transcripts ADD COLUMN learn INTEGER NOT NULL DEFAULT 1;
-- The channels whose learning a manager switched, as a JSON object channel id → true/false;
-- a channel it does not name follows the default (on, off when Discord marks it
-- age-restricted).
ALTER TABLE guild_settings ADD COLUMN learning_channels TEXT NOT NULL DEFAULT '{}';
