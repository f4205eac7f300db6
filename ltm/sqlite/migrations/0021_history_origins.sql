-- Where each history row's texts were said (SPEC §2 "Channel-aware memory"): a row may quote
-- words from another channel than its memory's (its content before a change that moved it,
-- a pipeline proposal from the batch's conversation, the statement of a memory it may
-- contradict), and a view shows a text only to those who may read where it was said. The
-- old and new sides have their own origin, since a move makes them differ. A NULL guild is
-- an unknown origin: only the operator sees that text.
ALTER TABLE memory_history ADD COLUMN old_origin_guild TEXT;
ALTER TABLE memory_history ADD COLUMN old_origin_channel TEXT;
ALTER TABLE memory_history ADD COLUMN new_origin_guild TEXT;
ALTER TABLE memory_history ADD COLUMN new_origin_channel TEXT;

-- Older rows get an origin only where the recorded data makes it certain. Every change that
-- moved a memory records the move in its row's metadata ("channel_id", "guild_id": the
-- feature and the record came together), and retention drops history oldest first, so a
-- memory's own texts after its last recorded move (and the new text of that move) were said
-- where the memory is now. Any metadata naming those keys counts as a move, to err on the
-- side of unknown. A proposal's words came from a batch whose channel no row records: they
-- stay unknown.
WITH moves AS (
    SELECT memory_id, max(id) AS last_move FROM memory_history
    WHERE memory_id IS NOT NULL AND (metadata LIKE '%"channel\_id"%' ESCAPE '\' OR metadata LIKE '%"guild\_id"%' ESCAPE '\')
    GROUP BY memory_id
)
UPDATE memory_history AS h SET old_origin_guild = m.guild_id, old_origin_channel = m.channel_id
FROM memories AS m
WHERE m.id = h.memory_id AND m.scope_key = h.scope_key
    AND h.id > coalesce((SELECT last_move FROM moves WHERE moves.memory_id = h.memory_id), 0);

WITH moves AS (
    SELECT memory_id, max(id) AS last_move FROM memory_history
    WHERE memory_id IS NOT NULL AND (metadata LIKE '%"channel\_id"%' ESCAPE '\' OR metadata LIKE '%"guild\_id"%' ESCAPE '\')
    GROUP BY memory_id
)
UPDATE memory_history AS h SET new_origin_guild = m.guild_id, new_origin_channel = m.channel_id
FROM memories AS m
WHERE m.id = h.memory_id AND m.scope_key = h.scope_key AND h.action IN ('create', 'import', 'update', 'recover')
    AND h.id >= coalesce((SELECT last_move FROM moves WHERE moves.memory_id = h.memory_id), 0);

-- A "may contradict" row quotes the other memory (metadata "conflicts_with"), as it was when
-- the row was written: certain when that memory has not moved since.
WITH moves AS (
    SELECT memory_id, max(id) AS last_move FROM memory_history
    WHERE memory_id IS NOT NULL AND (metadata LIKE '%"channel\_id"%' ESCAPE '\' OR metadata LIKE '%"guild\_id"%' ESCAPE '\')
    GROUP BY memory_id
)
UPDATE memory_history AS h SET new_origin_guild = m.guild_id, new_origin_channel = m.channel_id
FROM memories AS m
WHERE h.action = 'review_needed' AND h.metadata LIKE '%"conflicts\_with"%' ESCAPE '\'
    AND m.id = CASE WHEN json_valid(h.metadata) THEN json_extract(h.metadata, '$.conflicts_with') END AND m.scope_key = h.scope_key
    AND h.id > coalesce((SELECT last_move FROM moves WHERE moves.memory_id = m.id), 0);
