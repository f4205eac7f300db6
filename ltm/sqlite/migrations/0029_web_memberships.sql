-- The web dashboard's sessions learn the member's standing in each server kioku is in
-- (memory.WebMembership: member or not, and their roles), read with the bot's token at
-- sign-in and again once it is older than the bound roles are kept for. memberships is a
-- JSON array; checked_at (Unix milliseconds) is when it was read: 0 for sessions made
-- before, which are read again at their next request, and until then see no server memory.
ALTER TABLE web_sessions ADD COLUMN memberships TEXT NOT NULL DEFAULT '[]';
ALTER TABLE web_sessions ADD COLUMN checked_at INTEGER NOT NULL DEFAULT 0;
