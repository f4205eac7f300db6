-- Discord events (SPEC §2 "Deleted messages"): a deleted or edited message is found in the
-- transcript by its id, on every MESSAGE_DELETE and MESSAGE_UPDATE, without scanning the
-- channel's whole history.
CREATE INDEX transcripts_message ON transcripts (message_id);
