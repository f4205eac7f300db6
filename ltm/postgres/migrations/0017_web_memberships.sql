-- The web dashboard's sessions learn the member's standing in each server, as on SQLite
-- (migration 0029 there): a JSON array and when it was read (0: read at the next request).
ALTER TABLE web_sessions ADD COLUMN memberships TEXT NOT NULL DEFAULT '[]';
ALTER TABLE web_sessions ADD COLUMN checked_at BIGINT NOT NULL DEFAULT 0;
