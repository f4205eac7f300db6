-- What kioku last saw of each guild's roles and owner, beside its channels (ltm's migration
-- 0020): any process decides who can view a channel exactly as the one that receives the
-- guild's events. A guild without a row has unknown roles, and unknown means not visible.
-- roles is a JSON object of role id to permission bits. Only ids and permission bits.
CREATE TABLE guild_roles (
    guild_id   TEXT    PRIMARY KEY,
    owner_id   TEXT    NOT NULL DEFAULT '',
    roles      TEXT    NOT NULL DEFAULT '{}',
    updated_at BIGINT  NOT NULL
);
