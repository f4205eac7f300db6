-- Recall's neighbourhood smoothing reads the messages written just before and just after a
-- strong match in the same conversation (its scope and channel). This index makes each of
-- those look-ups a short range read instead of a pass over the scope.
CREATE INDEX memories_conversation ON memories (scope_key, channel_id, id) WHERE deleted_at IS NULL;
