-- What kioku last saw of each guild's roles and owner, beside its channels (0005's
-- guild_channels): who can view a channel is decided from both. Any process then decides
-- exactly as the one that receives the guild's events, including a pipeline job of a shard
-- another process runs, a guild in an outage, and the window after a restart before the
-- guild's GUILD_CREATE. A guild without a row has unknown roles, and unknown means not
-- visible: its memories stay in the channel they were learned in until a row is written.
-- roles is a JSON object of role id to permission bits (the @everyone role's id is the
-- guild's). Only ids and permission bits: nothing anyone said.
CREATE TABLE guild_roles (
    guild_id   TEXT    PRIMARY KEY,
    owner_id   TEXT    NOT NULL DEFAULT '',
    roles      TEXT    NOT NULL DEFAULT '{}',
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
