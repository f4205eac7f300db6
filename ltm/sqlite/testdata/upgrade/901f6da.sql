-- A database written by kioku at commit 901f6da (migrations 0001-0019), dumped with
-- `sqlite3 FILE .dump`: memories in a server and a personal scope, an edit, a forget, a
-- member's privacy, two transcript turns and a queued job. TestUpgradeFrom901f6da opens it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
		name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL);
INSERT INTO schema_migrations VALUES('0001_memories.sql','bf7d16b0df1c94fdb9aa49d4f19cd0cc4626d2e9bdcc4b27b57f2d602fc215e1',1795837179109);
INSERT INTO schema_migrations VALUES('0002_settings_transcripts_jobs.sql','c9b5e864303afdda0db7f3d97953fae1f61cd06a06ae5f04025c4e35348ef861',1795837179110);
INSERT INTO schema_migrations VALUES('0003_pipeline.sql','319d1e022411505dc9175a59ef5a52160e53c56a87986c70ab6573964e89ead5',1795837179111);
INSERT INTO schema_migrations VALUES('0004_search_text.sql','874bfbcd3c9387a98d3b9bc48e84613e567dae8e99f70a1d826ceb8a45bedee2',1795837179126);
INSERT INTO schema_migrations VALUES('0005_trust.sql','fc7e09558d455f6e80585f5c9fe978b726264a086d7e45d9c3efec1fb4643366',1795837179139);
INSERT INTO schema_migrations VALUES('0006_events.sql','a3b4ccb8074f6423da677fc8d7dc3cde14df16c8497525dbfbc87ed75753b99e',1795837179139);
INSERT INTO schema_migrations VALUES('0006_pipeline.sql','a108f5ee74fe1262313509421034e17d7dfa4057816bf5cd6f8d331266b17d6f',1795837179140);
INSERT INTO schema_migrations VALUES('0006_surface.sql','86c9df5a6d84cb3dad846fc43474cd0d6d946259fcb09a1595c40f9952f5b929',1795837179141);
INSERT INTO schema_migrations VALUES('0007_search_text_columns.sql','04f59727a180ef6ff0d876c4ffca670c640f9359d6e2e6611fe4f6a6234b822e',1795837179143);
INSERT INTO schema_migrations VALUES('0008_maintenance.sql','082a0bbe40e26b95bfd4cbb63fb5022773bbdf8c01f4a2210a72961b23bd193c',1795837179144);
INSERT INTO schema_migrations VALUES('0009_limits.sql','39288af70e87a2079f96da6798175a506353c77935d2ca36664b7e541cfce877',1795837179144);
INSERT INTO schema_migrations VALUES('0010_graph.sql','3a759d07c72a2ce4d5656aecfbf6ef26b46c71f049d272cfefc4a05e899252b0',1795837179146);
INSERT INTO schema_migrations VALUES('0011_conversation_index.sql','a425a0111dea9d3f1a1014f05bf6770e77995783c945f5b58627aa5229ac4ab3',1795837179146);
INSERT INTO schema_migrations VALUES('0012_memory_changes.sql','9c24c6f9641d32c6f491a1a15263acd6d84aa8321dc615604e9b9376076eb931',1795837179146);
INSERT INTO schema_migrations VALUES('0013_language_onboarding.sql','255918a47a6f45089358792255dd7d35f947f7bdde864a75bee2cdad7ab831bf',1795837179148);
INSERT INTO schema_migrations VALUES('0014_embedding_keys.sql','9479b803a946b550ae2604766ee05a6c9bf775e2a1c7ec349b25bf9023941d86',1795837179148);
INSERT INTO schema_migrations VALUES('0015_embeddings_rowid.sql','960ba25b334601a91b14148fae5221c60d5b087f12c3270c54d5b2c3a2c55e4f',1795837179149);
INSERT INTO schema_migrations VALUES('0016_pinned_index.sql','39e42e8ac1721ef69bcdcd1690c3525b9a3c2738fa9af93245c821be0b145172',1795837179149);
INSERT INTO schema_migrations VALUES('0017_hash_indexes.sql','ee551a032455cdd62920e13756a5c10527bfcdd9580516aa6ea6c320f5802cf7',1795837179149);
INSERT INTO schema_migrations VALUES('0018_trigram_cjk.sql','c7454e6befa0e919df7f39ea0359511e3010d9f9bbda7cbb7de9d115be54e724',1795837179150);
INSERT INTO schema_migrations VALUES('0019_index_pending.sql','9d65a86a071751c42f1d47821fc31adb273959871b8bc02634380faa7f42904b',1795837179151);
CREATE TABLE memories (
    id            INTEGER PRIMARY KEY,
    scope         TEXT    NOT NULL CHECK (scope IN ('server', 'personal')),
    scope_key     TEXT    NOT NULL,
    guild_id      TEXT    NOT NULL DEFAULT '',
    user_id       TEXT    NOT NULL DEFAULT '',
    type          TEXT    NOT NULL CHECK (type IN ('fact', 'preference', 'decision', 'procedural', 'semantic', 'event')),
    content       TEXT    NOT NULL CHECK (length(content) > 0),
    normalized    TEXT    NOT NULL,
    content_hash  TEXT    NOT NULL,
    confidence    REAL    NOT NULL DEFAULT 1.0,
    importance    REAL    NOT NULL DEFAULT 0.5,
    pinned        INTEGER NOT NULL DEFAULT 0,
    tags          TEXT    NOT NULL DEFAULT '[]',
    source        TEXT    NOT NULL CHECK (source IN ('tool', 'command', 'pipeline', 'import')),
    author_id     TEXT    NOT NULL DEFAULT '',
    author_name   TEXT    NOT NULL DEFAULT '',
    channel_id    TEXT    NOT NULL DEFAULT '',
    message_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    accessed_at   INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    version       INTEGER NOT NULL DEFAULT 1,
    deleted_at    INTEGER
, subject_id TEXT NOT NULL DEFAULT '', search_text TEXT NOT NULL DEFAULT '', search_author TEXT NOT NULL DEFAULT '', index_pending INTEGER NOT NULL DEFAULT 0);
INSERT INTO memories VALUES(1,'server','g:g1','g1','','fact','The raid starts at 20:30 on Fridays','the raid starts at 20:30 on fridays','37508d91c86bc0c64266f58683c9083b0ac2f46792ddea08537172dedd59f5e8',0.9000000000000000222,0.5,0,'["events"]','command','u1','Aiko','c1','m-35',1795837179154,1795837179158,0,0,2,NULL,'','','',0);
INSERT INTO memories VALUES(2,'server','g:g1','g1','','fact','Board game night is at Kenji''s place','board game night is at kenji''s place','eb1512f3f4ed6f78645f846caebd3345f0d493d39db0ba3804437db99a3fd75f',0.9000000000000000222,0.5,0,'["events"]','command','u1','Aiko','c1','m-36',1795837179155,1795837179155,0,0,1,NULL,'','','',0);
INSERT INTO memories VALUES(3,'server','g:g1','g1','','fact','東京タワーで月曜日に集合','東京タワーで月曜日に集合','c0c04696b5988834c7f283e156300f95381672f337242f27d9c4bff5d636d1f6',0.9000000000000000222,0.5,0,'["events"]','command','u1','Aiko','c1','m-36',1795837179156,1795837179156,0,0,1,NULL,'','','',0);
INSERT INTO memories VALUES(4,'server','g:g1','g1','','fact','The guild bank password is kept by the officers','the guild bank password is kept by the officers','c9d7ebfc8759797686eefcf1620616b8541c28de4c7b20a86057985f9fcdbf48',0.9000000000000000222,0.5,0,'["events"]','command','u1','Aiko','c1','m-47',1795837179156,1795837179158,0,0,2,1795837179158,'','','',0);
INSERT INTO memories VALUES(5,'personal','u:u1','g1','u1','decision','Aiko prefers tea over coffee','aiko prefers tea over coffee','32f901ed032a82c3368f7eedd2e2bd59672a3125f7abc53a74e94dd3bc784601',0.9000000000000000222,0.8000000000000000444,0,'[]','command','u1','Aiko','c1','m-28',1795837179156,1795837179156,0,0,1,NULL,'','','',0);
INSERT INTO memories VALUES(6,'personal','u:u1','g1','u1','fact','Aiko is learning Rust','aiko is learning rust','2f65ed9b7454d59e7bd035c92871e91759b00e3b100d2e28269f0e061d73e66b',0.9000000000000000222,0.5,0,'[]','command','u1','Aiko','c1','m-21',1795837179157,1795837179157,0,0,1,NULL,'','','',0);
PRAGMA writable_schema=ON;
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','memories_tri','memories_tri',0,'CREATE VIRTUAL TABLE memories_tri USING fts5 (
    content,
    content = ''memories'', content_rowid = ''id'',
    tokenize = ''trigram''
)');
CREATE TABLE IF NOT EXISTS 'memories_tri_data'(id INTEGER PRIMARY KEY, block BLOB);
INSERT INTO memories_tri_data VALUES(1,X'010a');
INSERT INTO memories_tri_data VALUES(10,X'000000010101010001010101');
INSERT INTO memories_tri_data VALUES(137438953473,X'000000870a30e381a7e69c88e69b9c0302070307abe99b86e5908803020b020882bfe383afe383bc030204020883afe383bce381a70302050307bce381a7e69c880302060109e4baace382bfe383af0302030109e697a5e381abe99b8603020a02089b9ce697a5e381ab03020902089c88e69b9ce697a503020802089db1e4baace382bf030202040e0c0d0d0c0e0e0d0d');
CREATE TABLE IF NOT EXISTS 'memories_tri_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
INSERT INTO memories_tri_idx VALUES(1,X'',2);
CREATE TABLE IF NOT EXISTS 'memories_tri_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
INSERT INTO memories_tri_docsize VALUES(3,X'0a');
CREATE TABLE IF NOT EXISTS 'memories_tri_config'(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO memories_tri_config VALUES('secure-delete',1);
INSERT INTO memories_tri_config VALUES('version',4);
CREATE TABLE memory_history (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER,
    scope_key   TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    old_content TEXT    NOT NULL DEFAULT '',
    new_content TEXT    NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 0,
    actor       TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL
);
INSERT INTO memory_history VALUES(1,1,'g:g1','create','','The raid starts at 21:00 on Fridays',1,'user:u1','','{}',1795837179155);
INSERT INTO memory_history VALUES(2,2,'g:g1','create','','Board game night is at Kenji''s place',1,'user:u1','','{}',1795837179155);
INSERT INTO memory_history VALUES(3,3,'g:g1','create','','東京タワーで月曜日に集合',1,'user:u1','','{}',1795837179156);
INSERT INTO memory_history VALUES(4,4,'g:g1','create','','The guild bank password is kept by the officers',1,'user:u1','','{}',1795837179156);
INSERT INTO memory_history VALUES(5,5,'u:u1','create','','Aiko prefers tea over coffee',1,'user:u1','','{"decision":true}',1795837179157);
INSERT INTO memory_history VALUES(6,6,'u:u1','create','','Aiko is learning Rust',1,'user:u1','','{}',1795837179157);
INSERT INTO memory_history VALUES(7,1,'g:g1','update','The raid starts at 21:00 on Fridays','The raid starts at 20:30 on Fridays',2,'user:u1','','{}',1795837179158);
INSERT INTO memory_history VALUES(8,4,'g:g1','delete','The guild bank password is kept by the officers','',2,'user:u1','not for the bot','{}',1795837179159);
CREATE TABLE confirmations (
    token      TEXT    PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    actor      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE TABLE user_settings (
    user_id      TEXT    PRIMARY KEY,
    privacy      TEXT    NOT NULL DEFAULT 'normal' CHECK (privacy IN ('normal', 'partial', 'full')),
    cross_server INTEGER NOT NULL DEFAULT 0,
    updated_at   INTEGER NOT NULL
);
INSERT INTO user_settings VALUES('u2','full',0,1795837179159);
CREATE TABLE guild_settings (
    guild_id            TEXT    PRIMARY KEY,
    self_teaching       INTEGER NOT NULL DEFAULT 0,
    pipeline_mode       TEXT    NOT NULL DEFAULT 'full',
    auto_reply_channels TEXT    NOT NULL DEFAULT '[]',
    persona             TEXT    NOT NULL DEFAULT '',
    editor_role_id      TEXT    NOT NULL DEFAULT '',
    updated_at          INTEGER NOT NULL
, language TEXT NOT NULL DEFAULT 'auto'
    CHECK (language IN ('auto', 'en', 'ja')));
CREATE TABLE transcripts (
    id          INTEGER PRIMARY KEY,
    guild_id    TEXT    NOT NULL DEFAULT '',
    channel_id  TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    author_name TEXT    NOT NULL DEFAULT '',
    role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT    NOT NULL,
    message_id  TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
, can_edit_server INTEGER NOT NULL DEFAULT 0);
INSERT INTO transcripts VALUES(1,'g1','c1','u1','Aiko','user','who brings the snacks?','t0',1795837179159,0);
INSERT INTO transcripts VALUES(2,'g1','c1','u1','Aiko','user','Kenji does, as always','t1',1795837179159,0);
CREATE TABLE memory_jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL,
    dedup_key    TEXT    NOT NULL,
    payload      TEXT    NOT NULL DEFAULT '{}',
    state        TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    run_after    INTEGER NOT NULL,
    lease_owner  TEXT    NOT NULL DEFAULT '',
    leased_until INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
, auto_requeues INTEGER NOT NULL DEFAULT 0);
INSERT INTO memory_jobs VALUES(1,'extract','g1/c1','{"channel_id":"c1","guild_id":"g1"}','queued',0,5,1795837179159,'',0,'',1795837179159,1795837179159,0);
CREATE TABLE pipeline_cursors (
    guild_id     TEXT    NOT NULL,
    channel_id   TEXT    NOT NULL,
    last_turn_id INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
) WITHOUT ROWID;
CREATE TABLE pipeline_runs (
    name        TEXT    PRIMARY KEY,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    ok          INTEGER NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    detail      TEXT    NOT NULL DEFAULT '',
    runs        INTEGER NOT NULL DEFAULT 0,
    failures    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','memories_fts','memories_fts',0,'CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, author_name,
    content = '''', contentless_delete = 1,
    tokenize = ''porter unicode61 remove_diacritics 2''
)');
CREATE TABLE IF NOT EXISTS 'memories_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
INSERT INTO memories_fts_data VALUES(1,X'051a05');
INSERT INTO memories_fts_data VALUES(10,X'00000001ff00000101010100010101010101000005');
INSERT INTO memories_fts_data VALUES(137438953473,X'000001070330323001020601023330010207010461696b6f0106010102010601010201060101020208020101020108020101020201740102050102060105626f6172640202020105636f6666650502060106667269646169010209010467616d650202030102697302020504020301056b656e6a6902020701056c6561726e06020401056e6967687402020401026f6e01020802037665720502050105706c6163650202090205726566657205020301047261696401020302037573740602050101730202080204746172740102040103746561050204020268650102020124e69db1e4baace382bfe383afe383bce381a7e69c88e69b9ce697a5e381abe99b86e5908803020204070721090a0a0b090a0a0a0a07080a0a090806090807');
CREATE TABLE IF NOT EXISTS 'memories_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
INSERT INTO memories_fts_idx VALUES(1,X'',2);
CREATE TABLE IF NOT EXISTS 'memories_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB, origin INTEGER);
INSERT INTO memories_fts_docsize VALUES(1,X'0801',1);
INSERT INTO memories_fts_docsize VALUES(2,X'0801',1);
INSERT INTO memories_fts_docsize VALUES(3,X'0101',1);
INSERT INTO memories_fts_docsize VALUES(5,X'0501',1);
INSERT INTO memories_fts_docsize VALUES(6,X'0401',1);
CREATE TABLE IF NOT EXISTS 'memories_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO memories_fts_config VALUES('secure-delete',1);
INSERT INTO memories_fts_config VALUES('version',4);
CREATE TABLE memory_evidence (
    memory_id  INTEGER NOT NULL,
    message_id TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    PRIMARY KEY (memory_id, message_id)
) WITHOUT ROWID;
CREATE TABLE forget_fences (
    user_id      TEXT    PRIMARY KEY,
    forgotten_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE guild_channels (
    guild_id       TEXT    NOT NULL,
    channel_id     TEXT    NOT NULL,
    parent_id      TEXT    NOT NULL DEFAULT '',
    kind           INTEGER NOT NULL DEFAULT 0,
    private_thread INTEGER NOT NULL DEFAULT 0,
    overwrites     TEXT    NOT NULL DEFAULT '[]',
    deleted_at     INTEGER,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
) WITHOUT ROWID;
CREATE TABLE guild_departures (
    guild_id    TEXT    PRIMARY KEY,
    left_at     INTEGER NOT NULL,
    purge_after INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE store_repairs (
    name    TEXT    PRIMARY KEY,
    cursor  INTEGER NOT NULL DEFAULT 0,
    done_at INTEGER
) WITHOUT ROWID;
INSERT INTO store_repairs VALUES('fill-search-text',0,1795837179000);
INSERT INTO store_repairs VALUES('link-graph',0,1795837179000);
INSERT INTO store_repairs VALUES('redact-secrets',0,NULL);
INSERT INTO store_repairs VALUES('strip-job-content',0,NULL);
INSERT INTO store_repairs VALUES('vacuum-freed-pages',0,NULL);
CREATE TABLE pinned_changes (
    scope_key TEXT    PRIMARY KEY,
    version   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE maintenance_repairs (
    id           INTEGER PRIMARY KEY,
    run_at       INTEGER NOT NULL,
    action       TEXT    NOT NULL,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('executed', 'failed', 'observed', 'skipped_cooldown', 'skipped_budget', 'halted')),
    mode         TEXT    NOT NULL,
    score_before INTEGER NOT NULL,
    score_after  INTEGER NOT NULL,
    found        INTEGER NOT NULL DEFAULT 0,
    changed      INTEGER NOT NULL DEFAULT 0,
    error        TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE memory_counts (
    scope_key TEXT    PRIMARY KEY,
    live      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO memory_counts VALUES('g:g1',3);
INSERT INTO memory_counts VALUES('u:u1',2);
CREATE TABLE model_calls (
    budget_key TEXT    PRIMARY KEY,
    day        TEXT    NOT NULL,
    calls      INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE entities (
    id         INTEGER PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    normalized TEXT    NOT NULL,
    kind       TEXT    NOT NULL DEFAULT 'other',
    -- The member a person entity is, when a Discord mention or a display name tied it to
    -- one; forget-me removes the member's entities by this id. Names never set it alone.
    user_id    TEXT    NOT NULL DEFAULT '',
    mentions   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
INSERT INTO entities VALUES(1,'g:g1','Kenji','kenji','person','',1,1795837179155,1795837179155);
INSERT INTO entities VALUES(2,'g:g1','東京','東京','place','',1,1795837179156,1795837179156);
INSERT INTO entities VALUES(3,'g:g1','タワー','タワー','other','',1,1795837179156,1795837179156);
INSERT INTO entities VALUES(4,'u:u1','Aiko','aiko','person','u1',2,1795837179157,1795837179157);
INSERT INTO entities VALUES(5,'u:u1','Rust','rust','other','',1,1795837179157,1795837179157);
CREATE TABLE entity_aliases (
    entity_id INTEGER NOT NULL,
    scope_key TEXT    NOT NULL,
    alias     TEXT    NOT NULL,
    PRIMARY KEY (entity_id, alias)
) WITHOUT ROWID;
INSERT INTO entity_aliases VALUES(1,'g:g1','kenji');
INSERT INTO entity_aliases VALUES(3,'g:g1','タワー');
INSERT INTO entity_aliases VALUES(2,'g:g1','東京');
INSERT INTO entity_aliases VALUES(4,'u:u1','aiko');
INSERT INTO entity_aliases VALUES(5,'u:u1','rust');
CREATE TABLE relations (
    id         INTEGER PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    source_id  INTEGER NOT NULL,
    target_id  INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    mentions   INTEGER NOT NULL DEFAULT 1,
    confidence REAL    NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE relation_sources (
    relation_id INTEGER NOT NULL,
    user_id     TEXT    NOT NULL,
    PRIMARY KEY (relation_id, user_id)
) WITHOUT ROWID;
CREATE TABLE memory_entities (
    memory_id INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
INSERT INTO memory_entities VALUES(2,1);
INSERT INTO memory_entities VALUES(3,2);
INSERT INTO memory_entities VALUES(3,3);
INSERT INTO memory_entities VALUES(5,4);
INSERT INTO memory_entities VALUES(6,4);
INSERT INTO memory_entities VALUES(6,5);
CREATE TABLE memory_changes (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL
);
INSERT INTO memory_changes VALUES(1,1);
INSERT INTO memory_changes VALUES(2,2);
INSERT INTO memory_changes VALUES(3,3);
INSERT INTO memory_changes VALUES(4,4);
INSERT INTO memory_changes VALUES(5,5);
INSERT INTO memory_changes VALUES(6,6);
INSERT INTO memory_changes VALUES(7,1);
INSERT INTO memory_changes VALUES(8,4);
CREATE TABLE guild_onboarding (
    guild_id   TEXT    PRIMARY KEY,
    greeted_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE embeddings (
    content_hash TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE TABLE memories_tri_legacy (
    max_id INTEGER NOT NULL
);
INSERT INTO memories_tri_legacy VALUES(0);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('memory_changes',8);
CREATE INDEX memories_tombstones ON memories (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memory_history_memory ON memory_history (memory_id, id);
CREATE INDEX memory_history_created ON memory_history (created_at);
CREATE INDEX transcripts_channel ON transcripts (guild_id, channel_id, id);
CREATE INDEX transcripts_user ON transcripts (user_id);
CREATE INDEX transcripts_created ON transcripts (created_at);
CREATE UNIQUE INDEX memory_jobs_dedup ON memory_jobs (kind, dedup_key) WHERE state IN ('queued', 'leased');
CREATE INDEX memory_jobs_ready ON memory_jobs (state, run_after);
CREATE INDEX memory_jobs_leased ON memory_jobs (leased_until) WHERE state = 'leased';
CREATE INDEX memory_jobs_finished ON memory_jobs (state, updated_at) WHERE state IN ('done', 'dead');
CREATE INDEX memories_subject ON memories (subject_id) WHERE subject_id <> '';
CREATE INDEX memories_author ON memories (author_id) WHERE author_id <> '';
CREATE INDEX memories_guild ON memories (guild_id);
CREATE INDEX memory_evidence_message ON memory_evidence (message_id);
CREATE INDEX memory_evidence_user ON memory_evidence (user_id);
CREATE INDEX transcripts_message ON transcripts (message_id);
CREATE TRIGGER memories_pinned_ai AFTER INSERT ON memories WHEN new.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (new.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER memories_pinned_ad AFTER DELETE ON memories WHEN old.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (old.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER memories_pinned_au AFTER UPDATE OF scope_key, content, type, pinned, tags, deleted_at, version,
    author_id, author_name, channel_id, message_id, subject_id ON memories
    WHEN old.pinned <> 0 OR new.pinned <> 0 BEGIN
    INSERT INTO pinned_changes (scope_key, version) VALUES (old.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
    INSERT INTO pinned_changes (scope_key, version) SELECT new.scope_key, 1 WHERE new.scope_key <> old.scope_key
        ON CONFLICT (scope_key) DO UPDATE SET version = version + 1;
END;
CREATE INDEX maintenance_repairs_run ON maintenance_repairs (run_at);
CREATE TRIGGER memories_count_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO memory_counts (scope_key, live) VALUES (new.scope_key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;
CREATE TRIGGER memories_count_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
END;
CREATE TRIGGER memories_count_au AFTER UPDATE OF scope_key, deleted_at ON memories
    WHEN (old.deleted_at IS NULL) <> (new.deleted_at IS NULL) OR old.scope_key <> new.scope_key BEGIN
    UPDATE memory_counts SET live = live - 1 WHERE scope_key = old.scope_key AND old.deleted_at IS NULL;
    DELETE FROM memory_counts WHERE scope_key = old.scope_key AND live <= 0;
    INSERT INTO memory_counts (scope_key, live) SELECT new.scope_key, 1 WHERE new.deleted_at IS NULL
        ON CONFLICT (scope_key) DO UPDATE SET live = live + 1;
END;
CREATE INDEX entities_name ON entities (scope_key, normalized);
CREATE UNIQUE INDEX entities_member ON entities (scope_key, user_id) WHERE user_id <> '';
CREATE INDEX entities_user ON entities (user_id) WHERE user_id <> '';
CREATE INDEX entities_top ON entities (scope_key, mentions);
CREATE INDEX entities_orphan ON entities (id) WHERE mentions <= 0;
CREATE INDEX entity_aliases_lookup ON entity_aliases (scope_key, alias);
CREATE UNIQUE INDEX relations_edge ON relations (source_id, target_id, type);
CREATE INDEX relations_target ON relations (target_id);
CREATE INDEX relations_scope ON relations (scope_key);
CREATE INDEX relation_sources_user ON relation_sources (user_id);
CREATE INDEX memory_entities_entity ON memory_entities (entity_id);
CREATE TRIGGER memory_entities_ai AFTER INSERT ON memory_entities BEGIN
    UPDATE entities SET mentions = mentions + 1 WHERE id = new.entity_id;
END;
CREATE TRIGGER memory_entities_ad AFTER DELETE ON memory_entities BEGIN
    UPDATE entities SET mentions = mentions - 1 WHERE id = old.entity_id;
END;
CREATE TRIGGER relations_ai AFTER INSERT ON relations BEGIN
    UPDATE entities SET mentions = mentions + new.mentions WHERE id IN (new.source_id, new.target_id);
END;
CREATE TRIGGER relations_au AFTER UPDATE OF mentions ON relations BEGIN
    UPDATE entities SET mentions = mentions + new.mentions - old.mentions WHERE id IN (new.source_id, new.target_id);
END;
CREATE TRIGGER relations_ad AFTER DELETE ON relations BEGIN
    UPDATE entities SET mentions = mentions - old.mentions WHERE id IN (old.source_id, old.target_id);
    DELETE FROM relation_sources WHERE relation_id = old.id;
END;
CREATE TRIGGER entities_ad AFTER DELETE ON entities BEGIN
    DELETE FROM entity_aliases WHERE entity_id = old.id;
    DELETE FROM memory_entities WHERE entity_id = old.id;
    DELETE FROM relations WHERE source_id = old.id OR target_id = old.id;
END;
CREATE TRIGGER memories_graph_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_entities WHERE memory_id = old.id;
END;
CREATE INDEX memories_conversation ON memories (scope_key, channel_id, id) WHERE deleted_at IS NULL;
CREATE TRIGGER memory_changes_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;
CREATE TRIGGER memory_changes_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (old.id);
END;
CREATE TRIGGER memory_changes_au AFTER UPDATE OF content, author_name, deleted_at, scope_key, guild_id, channel_id,
    type, pinned, importance, tags, author_id, created_at ON memories BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;
CREATE UNIQUE INDEX embeddings_keys ON embeddings (content_hash, model);
CREATE INDEX memories_pinned_live ON memories (scope_key, id) WHERE pinned <> 0 AND deleted_at IS NULL;
CREATE INDEX memories_hash_live ON memories (content_hash, scope_key, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX memories_hash_gone ON memories (content_hash, deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX memories_scope_live ON memories (scope_key, id, content_hash, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending <> 0;
CREATE TRIGGER memories_ai AFTER INSERT ON memories WHEN new.deleted_at IS NULL AND new.index_pending = 0 BEGIN
    INSERT INTO memories_fts (rowid, content, author_name) VALUES (new.id,
        CASE WHEN new.search_text <> '' THEN new.search_text ELSE new.content END,
        CASE WHEN new.search_author <> '' THEN new.search_author ELSE new.author_name END);
    INSERT INTO memories_tri (rowid, content) SELECT new.id, new.content
        WHERE length(CAST(new.content AS BLOB)) > length(new.content)
            OR new.id <= (SELECT max_id FROM memories_tri_legacy);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN old.deleted_at IS NULL AND old.index_pending = 0 BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_tri (memories_tri, rowid, content) SELECT 'delete', old.id, old.content
        WHERE length(CAST(old.content AS BLOB)) > length(old.content)
            OR old.id <= (SELECT max_id FROM memories_tri_legacy);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF content, author_name, search_text, search_author, deleted_at, index_pending ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id AND old.deleted_at IS NULL AND old.index_pending = 0;
    INSERT INTO memories_tri (memories_tri, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.deleted_at IS NULL AND old.index_pending = 0
            AND (new.content IS NOT old.content OR new.deleted_at IS NOT NULL OR new.index_pending <> 0)
            AND (length(CAST(old.content AS BLOB)) > length(old.content)
                OR old.id <= (SELECT max_id FROM memories_tri_legacy));
    INSERT INTO memories_fts (rowid, content, author_name)
        SELECT new.id,
            CASE WHEN new.search_text <> '' AND (new.content IS old.content OR new.search_text IS NOT old.search_text)
                THEN new.search_text ELSE new.content END,
            CASE WHEN new.search_author <> '' AND (new.author_name IS old.author_name OR new.search_author IS NOT old.search_author)
                THEN new.search_author ELSE new.author_name END
        WHERE new.deleted_at IS NULL AND new.index_pending = 0;
    INSERT INTO memories_tri (rowid, content)
        SELECT new.id, new.content WHERE new.deleted_at IS NULL AND new.index_pending = 0
            AND (new.content IS NOT old.content OR old.deleted_at IS NOT NULL OR old.index_pending <> 0)
            AND (length(CAST(new.content AS BLOB)) > length(new.content)
                OR new.id <= (SELECT max_id FROM memories_tri_legacy));
    UPDATE memories SET search_text = '' WHERE id = new.id AND new.search_text <> ''
        AND new.content IS NOT old.content AND new.search_text IS old.search_text;
    UPDATE memories SET search_author = '' WHERE id = new.id AND new.search_author <> ''
        AND new.author_name IS NOT old.author_name AND new.search_author IS old.search_author;
END;
PRAGMA writable_schema=OFF;
COMMIT;
