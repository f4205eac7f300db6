-- The web dashboard's sessions (memory.WebSession): one row per signed-in browser, found by
-- the SHA-256 of the token its cookie carries (the token itself is never stored). guild_ids
-- is the JSON array of the servers Discord listed for the member at sign-in; csrf the secret
-- its forms carry back. Times are Unix milliseconds. Forget-me deletes a member's rows.
CREATE TABLE web_sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    guild_ids    TEXT NOT NULL DEFAULT '[]',
    csrf         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- Sign-ins under way (memory.WebLogin): the SHA-256 of the OAuth state, of the nonce in the
-- starting browser's cookie, and the PKCE verifier; each row is taken once, and deleted
-- once expired. They name nobody: the member is known only when Discord answers.
CREATE TABLE web_logins (
    state_hash   TEXT PRIMARY KEY,
    browser_hash TEXT NOT NULL,
    verifier     TEXT NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX web_logins_expiry ON web_logins (expires_at);
