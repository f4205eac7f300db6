-- The web dashboard's sessions and sign-ins under way, as on SQLite (migration 0028 there):
-- hashes of the secrets browsers carry, never the secrets; times in Unix milliseconds.
-- Forget-me deletes a member's sessions.
CREATE TABLE web_sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    guild_ids    TEXT NOT NULL DEFAULT '[]',
    csrf         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

CREATE TABLE web_logins (
    state_hash   TEXT PRIMARY KEY,
    browser_hash TEXT NOT NULL,
    verifier     TEXT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX web_logins_expiry ON web_logins (expires_at);
