-- Where each history row's texts were said, old and new side apart; a NULL guild is an
-- unknown origin, shown only to the operator. The same columns and backfill as ltm's
-- migration 0021, which says why the backfill is certain: a memory's own texts after its
-- last recorded move, the new text of that move, and the other memory's statement in a
-- "may contradict" row when that memory has not moved since.
ALTER TABLE memory_history ADD COLUMN old_origin_guild TEXT;
ALTER TABLE memory_history ADD COLUMN old_origin_channel TEXT;
ALTER TABLE memory_history ADD COLUMN new_origin_guild TEXT;
ALTER TABLE memory_history ADD COLUMN new_origin_channel TEXT;

CREATE TEMPORARY TABLE history_last_moves ON COMMIT DROP AS
    SELECT memory_id, max(id) AS last_move FROM memory_history
    WHERE memory_id IS NOT NULL AND (metadata LIKE '%"channel\_id"%' ESCAPE '\' OR metadata LIKE '%"guild\_id"%' ESCAPE '\')
    GROUP BY memory_id;

UPDATE memory_history AS h SET old_origin_guild = m.guild_id, old_origin_channel = m.channel_id
FROM memories AS m
WHERE m.id = h.memory_id AND m.scope_key = h.scope_key
    AND h.id > coalesce((SELECT last_move FROM history_last_moves v WHERE v.memory_id = h.memory_id), 0);

UPDATE memory_history AS h SET new_origin_guild = m.guild_id, new_origin_channel = m.channel_id
FROM memories AS m
WHERE m.id = h.memory_id AND m.scope_key = h.scope_key AND h.action IN ('create', 'import', 'update', 'recover')
    AND h.id >= coalesce((SELECT last_move FROM history_last_moves v WHERE v.memory_id = h.memory_id), 0);

UPDATE memory_history AS h SET new_origin_guild = m.guild_id, new_origin_channel = m.channel_id
FROM memories AS m
WHERE h.action = 'review_needed' AND h.metadata ~ '"conflicts_with": *[0-9]+[,}]'
    AND m.id = substring(h.metadata FROM '"conflicts_with": *([0-9]+)')::bigint AND m.scope_key = h.scope_key
    AND h.id > coalesce((SELECT last_move FROM history_last_moves v WHERE v.memory_id = m.id), 0);
