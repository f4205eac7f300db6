-- Trust (SPEC §4 full mode): whether the speaker of a transcript turn could change the guild's
-- server memory when they spoke (Manage Server or the editor role). The pipeline applies an
-- UPDATE or DELETE of a server memory only when one of the people whose messages it came from
-- had that right, or wrote the memory; otherwise it is recorded as review_needed.
ALTER TABLE transcripts ADD COLUMN can_edit_server INTEGER NOT NULL DEFAULT 0;
