-- A database written by kioku at commit 901f6da (PostgreSQL migrations 0001-0006), dumped
-- with `pg_dump --schema=kioku_901f6da --no-owner --no-privileges --inserts` (psql-only
-- lines and CREATE SCHEMA dropped): the same contents as ltm/testdata/upgrade/901f6da.sql.
-- TestPostgresUpgradeFrom901f6da loads it into a fresh schema, naming it for
-- kioku_901f6da, and opens it.
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: kioku_901f6da; Type: SCHEMA; Schema: -; Owner: -
--



--
-- Name: kioku_bump_pinned(text); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_bump_pinned(key text) RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO pinned_changes (scope_key, version) VALUES (key, 1)
        ON CONFLICT (scope_key) DO UPDATE SET version = pinned_changes.version + 1;
$$;


--
-- Name: kioku_change_channel(text); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_change_channel(schema text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN octet_length('kioku_changes:' || schema) <= 63 THEN 'kioku_changes:' || schema
        ELSE 'kioku_changes:' || md5(schema) END;
$$;


--
-- Name: kioku_count_live(text, integer); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_count_live(key text, delta integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO memory_counts (scope_key, live) VALUES (key, delta)
        ON CONFLICT (scope_key) DO UPDATE SET live = memory_counts.live + delta;
    DELETE FROM memory_counts WHERE scope_key = key AND live <= 0;
END $$;


--
-- Name: kioku_embeddings_notify(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_embeddings_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    keys TEXT[];
    ids  BIGINT[];
BEGIN
    SELECT array_agg(m.scope_key), array_agg(m.id) INTO keys, ids FROM memories m
        WHERE m.deleted_at IS NULL AND m.content_hash IN (SELECT content_hash FROM new_rows);
    IF ids IS NOT NULL THEN
        PERFORM kioku_notify_memory_ids(kioku_change_channel(TG_TABLE_SCHEMA), keys, ids);
    END IF;
    RETURN NULL;
END $$;


--
-- Name: kioku_entities_deleted(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_entities_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM entity_aliases WHERE entity_id = OLD.id;
    DELETE FROM memory_entities WHERE entity_id = OLD.id;
    DELETE FROM relations WHERE source_id = OLD.id OR target_id = OLD.id;
    RETURN OLD;
END $$;


--
-- Name: kioku_fences_notify(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_fences_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'f ' || NEW.forgotten_at || ' ' || NEW.user_id);
    RETURN NULL;
END $$;


--
-- Name: kioku_memories_changed(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_memories_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.deleted_at IS NULL THEN PERFORM kioku_count_live(NEW.scope_key, 1); END IF;
        IF NEW.pinned <> 0 THEN PERFORM kioku_bump_pinned(NEW.scope_key); END IF;
        RETURN NEW;
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.deleted_at IS NULL THEN PERFORM kioku_count_live(OLD.scope_key, -1); END IF;
        IF OLD.pinned <> 0 THEN PERFORM kioku_bump_pinned(OLD.scope_key); END IF;
        DELETE FROM memory_entities WHERE memory_id = OLD.id;
        RETURN OLD;
    END IF;
    IF OLD.deleted_at IS NULL AND (NEW.deleted_at IS NOT NULL OR NEW.scope_key <> OLD.scope_key) THEN
        PERFORM kioku_count_live(OLD.scope_key, -1);
    END IF;
    IF NEW.deleted_at IS NULL AND (OLD.deleted_at IS NOT NULL OR NEW.scope_key <> OLD.scope_key) THEN
        PERFORM kioku_count_live(NEW.scope_key, 1);
    END IF;
    IF (OLD.pinned <> 0 OR NEW.pinned <> 0) AND (OLD.scope_key, OLD.content, OLD.type, OLD.pinned, OLD.tags,
        OLD.deleted_at, OLD.version, OLD.author_id, OLD.author_name, OLD.channel_id, OLD.message_id, OLD.subject_id)
        IS DISTINCT FROM (NEW.scope_key, NEW.content, NEW.type, NEW.pinned, NEW.tags, NEW.deleted_at, NEW.version,
        NEW.author_id, NEW.author_name, NEW.channel_id, NEW.message_id, NEW.subject_id) THEN
        PERFORM kioku_bump_pinned(OLD.scope_key);
        IF NEW.scope_key <> OLD.scope_key THEN PERFORM kioku_bump_pinned(NEW.scope_key); END IF;
    END IF;
    RETURN NEW;
END $$;


--
-- Name: kioku_memories_notify(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_memories_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    keys TEXT[];
    ids  BIGINT[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(scope_key), array_agg(id) INTO keys, ids FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(scope_key), array_agg(id) INTO keys, ids FROM old_rows;
    ELSE
        SELECT array_agg(c.key), array_agg(c.id) INTO keys, ids FROM (
            SELECT n.scope_key AS key, n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE (o.scope_key, o.content_hash, o.deleted_at, o.guild_id, o.channel_id, o.type, o.pinned,
                    o.importance, o.tags, o.author_id, o.created_at)
                IS DISTINCT FROM (n.scope_key, n.content_hash, n.deleted_at, n.guild_id, n.channel_id, n.type, n.pinned,
                    n.importance, n.tags, n.author_id, n.created_at)
            UNION ALL
            SELECT o.scope_key, o.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE o.scope_key <> n.scope_key) c;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM kioku_notify_memory_ids(kioku_change_channel(TG_TABLE_SCHEMA), keys, ids);
    END IF;
    RETURN NULL;
END $$;


--
-- Name: kioku_memory_entities_changed(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_memory_entities_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
        RETURN NEW;
    END IF;
    UPDATE entities SET mentions = mentions - 1 WHERE id = OLD.entity_id;
    RETURN OLD;
END $$;


--
-- Name: kioku_notify_memory_ids(text, text[], bigint[]); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_notify_memory_ids(chan text, keys text[], ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify(chan, 'm ' || string_agg(c.id::text, ',' ORDER BY c.id) || ' ' || c.key)
    FROM (SELECT d.key, d.id, (row_number() OVER (PARTITION BY d.key ORDER BY d.id) - 1) / 300 AS part
        FROM (SELECT DISTINCT u.key, u.id FROM unnest(keys, ids) AS u(key, id)) d) c
    GROUP BY c.key, c.part;
END $$;


--
-- Name: kioku_relations_changed(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_relations_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE entities SET mentions = mentions + NEW.mentions WHERE id IN (NEW.source_id, NEW.target_id);
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
        IF NEW.mentions <> OLD.mentions THEN
            UPDATE entities SET mentions = mentions + NEW.mentions - OLD.mentions WHERE id IN (NEW.source_id, NEW.target_id);
        END IF;
        RETURN NEW;
    END IF;
    UPDATE entities SET mentions = mentions - OLD.mentions WHERE id IN (OLD.source_id, OLD.target_id);
    DELETE FROM relation_sources WHERE relation_id = OLD.id;
    RETURN OLD;
END $$;


--
-- Name: kioku_settings_notify(); Type: FUNCTION; Schema: kioku_901f6da; Owner: -
--

CREATE FUNCTION kioku_901f6da.kioku_settings_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    r RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'user_settings' THEN
        PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'u ' || r.user_id);
    ELSE
        PERFORM pg_notify(kioku_change_channel(TG_TABLE_SCHEMA), 'g ' || r.guild_id);
    END IF;
    RETURN NULL;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: confirmations; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.confirmations (
    token text NOT NULL,
    scope_key text NOT NULL,
    kind text NOT NULL,
    payload text NOT NULL,
    actor text NOT NULL,
    expires_at bigint NOT NULL,
    used_at bigint
);


--
-- Name: embeddings; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.embeddings (
    content_hash text NOT NULL,
    model text NOT NULL,
    dims integer NOT NULL,
    vector bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: entities; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.entities (
    id bigint NOT NULL,
    scope_key text NOT NULL,
    name text NOT NULL,
    normalized text NOT NULL,
    kind text DEFAULT 'other'::text NOT NULL,
    user_id text DEFAULT ''::text NOT NULL,
    mentions integer DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: entities_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.entities ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.entities_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: entity_aliases; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.entity_aliases (
    entity_id bigint NOT NULL,
    scope_key text NOT NULL,
    alias text NOT NULL
);


--
-- Name: forget_fences; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.forget_fences (
    user_id text NOT NULL,
    forgotten_at bigint NOT NULL
);


--
-- Name: guild_channels; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.guild_channels (
    guild_id text NOT NULL,
    channel_id text NOT NULL,
    parent_id text DEFAULT ''::text NOT NULL,
    kind integer DEFAULT 0 NOT NULL,
    private_thread integer DEFAULT 0 NOT NULL,
    overwrites text DEFAULT '[]'::text NOT NULL,
    deleted_at bigint,
    updated_at bigint NOT NULL
);


--
-- Name: guild_departures; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.guild_departures (
    guild_id text NOT NULL,
    left_at bigint NOT NULL,
    purge_after bigint NOT NULL
);


--
-- Name: guild_onboarding; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.guild_onboarding (
    guild_id text NOT NULL,
    greeted_at bigint NOT NULL
);


--
-- Name: guild_settings; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.guild_settings (
    guild_id text NOT NULL,
    self_teaching integer DEFAULT 0 NOT NULL,
    pipeline_mode text DEFAULT 'full'::text NOT NULL,
    auto_reply_channels text DEFAULT '[]'::text NOT NULL,
    persona text DEFAULT ''::text NOT NULL,
    editor_role_id text DEFAULT ''::text NOT NULL,
    updated_at bigint NOT NULL,
    language text DEFAULT 'auto'::text NOT NULL,
    CONSTRAINT guild_settings_language_check CHECK ((language = ANY (ARRAY['auto'::text, 'en'::text, 'ja'::text])))
);


--
-- Name: maintenance_repairs; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.maintenance_repairs (
    id bigint NOT NULL,
    run_at bigint NOT NULL,
    action text NOT NULL,
    outcome text NOT NULL,
    mode text NOT NULL,
    score_before integer NOT NULL,
    score_after integer NOT NULL,
    found integer DEFAULT 0 NOT NULL,
    changed integer DEFAULT 0 NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    CONSTRAINT maintenance_repairs_outcome_check CHECK ((outcome = ANY (ARRAY['executed'::text, 'failed'::text, 'observed'::text, 'skipped_cooldown'::text, 'skipped_budget'::text, 'halted'::text])))
);


--
-- Name: maintenance_repairs_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.maintenance_repairs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.maintenance_repairs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memories; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memories (
    id bigint NOT NULL,
    scope text NOT NULL,
    scope_key text NOT NULL,
    guild_id text DEFAULT ''::text NOT NULL,
    user_id text DEFAULT ''::text NOT NULL,
    type text NOT NULL,
    content text NOT NULL,
    normalized text NOT NULL,
    content_hash text NOT NULL,
    confidence double precision DEFAULT 1.0 NOT NULL,
    importance double precision DEFAULT 0.5 NOT NULL,
    pinned integer DEFAULT 0 NOT NULL,
    tags text DEFAULT '[]'::text NOT NULL,
    source text NOT NULL,
    author_id text DEFAULT ''::text NOT NULL,
    author_name text DEFAULT ''::text NOT NULL,
    channel_id text DEFAULT ''::text NOT NULL,
    message_id text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    accessed_at bigint DEFAULT 0 NOT NULL,
    access_count integer DEFAULT 0 NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    deleted_at bigint,
    subject_id text DEFAULT ''::text NOT NULL,
    search_text text DEFAULT ''::text NOT NULL,
    search_author text DEFAULT ''::text NOT NULL,
    search_tsv tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('english'::regconfig, search_text), 'A'::"char") || setweight(to_tsvector('simple'::regconfig, search_author), 'B'::"char"))) STORED,
    CONSTRAINT memories_content_check CHECK ((length(content) > 0)),
    CONSTRAINT memories_scope_check CHECK ((scope = ANY (ARRAY['server'::text, 'personal'::text]))),
    CONSTRAINT memories_source_check CHECK ((source = ANY (ARRAY['tool'::text, 'command'::text, 'pipeline'::text, 'import'::text]))),
    CONSTRAINT memories_type_check CHECK ((type = ANY (ARRAY['fact'::text, 'preference'::text, 'decision'::text, 'procedural'::text, 'semantic'::text, 'event'::text])))
);


--
-- Name: memories_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.memories ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.memories_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memory_counts; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memory_counts (
    scope_key text NOT NULL,
    live integer NOT NULL
);


--
-- Name: memory_entities; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memory_entities (
    memory_id bigint NOT NULL,
    entity_id bigint NOT NULL
);


--
-- Name: memory_evidence; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memory_evidence (
    memory_id bigint NOT NULL,
    message_id text NOT NULL,
    user_id text NOT NULL
);


--
-- Name: memory_history; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memory_history (
    id bigint NOT NULL,
    memory_id bigint,
    scope_key text NOT NULL,
    action text NOT NULL,
    old_content text DEFAULT ''::text NOT NULL,
    new_content text DEFAULT ''::text NOT NULL,
    version integer DEFAULT 0 NOT NULL,
    actor text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    metadata text DEFAULT '{}'::text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: memory_history_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.memory_history ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.memory_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memory_jobs; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.memory_jobs (
    id bigint NOT NULL,
    kind text NOT NULL,
    dedup_key text NOT NULL,
    payload text DEFAULT '{}'::text NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 5 NOT NULL,
    run_after bigint NOT NULL,
    lease_owner text DEFAULT ''::text NOT NULL,
    leased_until bigint DEFAULT 0 NOT NULL,
    last_error text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    auto_requeues integer DEFAULT 0 NOT NULL,
    CONSTRAINT memory_jobs_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'leased'::text, 'done'::text, 'dead'::text])))
);


--
-- Name: memory_jobs_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.memory_jobs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.memory_jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: model_calls; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.model_calls (
    budget_key text NOT NULL,
    day text NOT NULL,
    calls integer NOT NULL
);


--
-- Name: pinned_changes; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.pinned_changes (
    scope_key text NOT NULL,
    version bigint NOT NULL
);


--
-- Name: pipeline_cursors; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.pipeline_cursors (
    guild_id text NOT NULL,
    channel_id text NOT NULL,
    last_turn_id bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: pipeline_runs; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.pipeline_runs (
    name text NOT NULL,
    started_at bigint NOT NULL,
    finished_at bigint NOT NULL,
    ok integer NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    detail text DEFAULT ''::text NOT NULL,
    runs integer DEFAULT 0 NOT NULL,
    failures integer DEFAULT 0 NOT NULL
);


--
-- Name: relation_sources; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.relation_sources (
    relation_id bigint NOT NULL,
    user_id text NOT NULL
);


--
-- Name: relations; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.relations (
    id bigint NOT NULL,
    scope_key text NOT NULL,
    source_id bigint NOT NULL,
    target_id bigint NOT NULL,
    type text NOT NULL,
    mentions integer DEFAULT 1 NOT NULL,
    confidence double precision DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: relations_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.relations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.relations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_migrations; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.schema_migrations (
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at bigint NOT NULL
);


--
-- Name: transcripts; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.transcripts (
    id bigint NOT NULL,
    guild_id text DEFAULT ''::text NOT NULL,
    channel_id text NOT NULL,
    user_id text NOT NULL,
    author_name text DEFAULT ''::text NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    message_id text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    can_edit_server integer DEFAULT 0 NOT NULL,
    CONSTRAINT transcripts_role_check CHECK ((role = ANY (ARRAY['user'::text, 'assistant'::text])))
);


--
-- Name: transcripts_id_seq; Type: SEQUENCE; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE kioku_901f6da.transcripts ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME kioku_901f6da.transcripts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: user_settings; Type: TABLE; Schema: kioku_901f6da; Owner: -
--

CREATE TABLE kioku_901f6da.user_settings (
    user_id text NOT NULL,
    privacy text DEFAULT 'normal'::text NOT NULL,
    cross_server integer DEFAULT 0 NOT NULL,
    updated_at bigint NOT NULL,
    CONSTRAINT user_settings_privacy_check CHECK ((privacy = ANY (ARRAY['normal'::text, 'partial'::text, 'full'::text])))
);


--
-- Data for Name: confirmations; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: embeddings; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: entities; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.entities VALUES (1, 'g:g1', 'Kenji', 'kenji', 'person', '', 1, 1795837179858, 1795837179858);
INSERT INTO kioku_901f6da.entities VALUES (2, 'g:g1', '東京', '東京', 'place', '', 1, 1795837179864, 1795837179864);
INSERT INTO kioku_901f6da.entities VALUES (3, 'g:g1', 'タワー', 'タワー', 'other', '', 1, 1795837179864, 1795837179864);
INSERT INTO kioku_901f6da.entities VALUES (5, 'u:u1', 'Rust', 'rust', 'other', '', 1, 1795837179879, 1795837179879);
INSERT INTO kioku_901f6da.entities VALUES (4, 'u:u1', 'Aiko', 'aiko', 'person', 'u1', 2, 1795837179871, 1795837179871);


--
-- Data for Name: entity_aliases; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.entity_aliases VALUES (1, 'g:g1', 'kenji');
INSERT INTO kioku_901f6da.entity_aliases VALUES (2, 'g:g1', '東京');
INSERT INTO kioku_901f6da.entity_aliases VALUES (3, 'g:g1', 'タワー');
INSERT INTO kioku_901f6da.entity_aliases VALUES (4, 'u:u1', 'aiko');
INSERT INTO kioku_901f6da.entity_aliases VALUES (5, 'u:u1', 'rust');


--
-- Data for Name: forget_fences; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: guild_channels; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: guild_departures; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: guild_onboarding; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: guild_settings; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: maintenance_repairs; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: memories; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.memories VALUES (2, 'server', 'g:g1', 'g1', '', 'fact', 'Board game night is at Kenji''s place', 'board game night is at kenji''s place', 'eb1512f3f4ed6f78645f846caebd3345f0d493d39db0ba3804437db99a3fd75f', 0.9, 0.5, 0, '["events"]', 'command', 'u1', 'Aiko', 'c1', 'm-36', 1795837179856, 1795837179856, 0, 0, 1, NULL, '', 'Board game night is at Kenji''s place', 'Aiko', DEFAULT);
INSERT INTO kioku_901f6da.memories VALUES (3, 'server', 'g:g1', 'g1', '', 'fact', '東京タワーで月曜日に集合', '東京タワーで月曜日に集合', 'c0c04696b5988834c7f283e156300f95381672f337242f27d9c4bff5d636d1f6', 0.9, 0.5, 0, '["events"]', 'command', 'u1', 'Aiko', 'c1', 'm-36', 1795837179862, 1795837179862, 0, 0, 1, NULL, '', '東京タワーで月曜日に集合', 'Aiko', DEFAULT);
INSERT INTO kioku_901f6da.memories VALUES (5, 'personal', 'u:u1', 'g1', 'u1', 'decision', 'Aiko prefers tea over coffee', 'aiko prefers tea over coffee', '32f901ed032a82c3368f7eedd2e2bd59672a3125f7abc53a74e94dd3bc784601', 0.9, 0.8, 0, '[]', 'command', 'u1', 'Aiko', 'c1', 'm-28', 1795837179870, 1795837179870, 0, 0, 1, NULL, '', 'Aiko prefers tea over coffee', 'Aiko', DEFAULT);
INSERT INTO kioku_901f6da.memories VALUES (6, 'personal', 'u:u1', 'g1', 'u1', 'fact', 'Aiko is learning Rust', 'aiko is learning rust', '2f65ed9b7454d59e7bd035c92871e91759b00e3b100d2e28269f0e061d73e66b', 0.9, 0.5, 0, '[]', 'command', 'u1', 'Aiko', 'c1', 'm-21', 1795837179875, 1795837179875, 0, 0, 1, NULL, '', 'Aiko is learning Rust', 'Aiko', DEFAULT);
INSERT INTO kioku_901f6da.memories VALUES (1, 'server', 'g:g1', 'g1', '', 'fact', 'The raid starts at 20:30 on Fridays', 'the raid starts at 20:30 on fridays', '37508d91c86bc0c64266f58683c9083b0ac2f46792ddea08537172dedd59f5e8', 0.9, 0.5, 0, '["events"]', 'command', 'u1', 'Aiko', 'c1', 'm-35', 1795837179848, 1795837179881, 0, 0, 2, NULL, '', 'The raid starts at 20:30 on Fridays', 'Aiko', DEFAULT);
INSERT INTO kioku_901f6da.memories VALUES (4, 'server', 'g:g1', 'g1', '', 'fact', 'The guild bank password is kept by the officers', 'the guild bank password is kept by the officers', 'c9d7ebfc8759797686eefcf1620616b8541c28de4c7b20a86057985f9fcdbf48', 0.9, 0.5, 0, '["events"]', 'command', 'u1', 'Aiko', 'c1', 'm-47', 1795837179868, 1795837179883, 0, 0, 2, 1795837179883, '', 'The guild bank password is kept by the officers', 'Aiko', DEFAULT);


--
-- Data for Name: memory_counts; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.memory_counts VALUES ('u:u1', 2);
INSERT INTO kioku_901f6da.memory_counts VALUES ('g:g1', 3);


--
-- Data for Name: memory_entities; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.memory_entities VALUES (2, 1);
INSERT INTO kioku_901f6da.memory_entities VALUES (3, 2);
INSERT INTO kioku_901f6da.memory_entities VALUES (3, 3);
INSERT INTO kioku_901f6da.memory_entities VALUES (5, 4);
INSERT INTO kioku_901f6da.memory_entities VALUES (6, 5);
INSERT INTO kioku_901f6da.memory_entities VALUES (6, 4);


--
-- Data for Name: memory_evidence; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: memory_history; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.memory_history VALUES (1, 1, 'g:g1', 'create', '', 'The raid starts at 21:00 on Fridays', 1, 'user:u1', '', '{}', 1795837179852);
INSERT INTO kioku_901f6da.memory_history VALUES (2, 2, 'g:g1', 'create', '', 'Board game night is at Kenji''s place', 1, 'user:u1', '', '{}', 1795837179857);
INSERT INTO kioku_901f6da.memory_history VALUES (3, 3, 'g:g1', 'create', '', '東京タワーで月曜日に集合', 1, 'user:u1', '', '{}', 1795837179863);
INSERT INTO kioku_901f6da.memory_history VALUES (4, 4, 'g:g1', 'create', '', 'The guild bank password is kept by the officers', 1, 'user:u1', '', '{}', 1795837179868);
INSERT INTO kioku_901f6da.memory_history VALUES (5, 5, 'u:u1', 'create', '', 'Aiko prefers tea over coffee', 1, 'user:u1', '', '{"decision":true}', 1795837179870);
INSERT INTO kioku_901f6da.memory_history VALUES (6, 6, 'u:u1', 'create', '', 'Aiko is learning Rust', 1, 'user:u1', '', '{}', 1795837179878);
INSERT INTO kioku_901f6da.memory_history VALUES (7, 1, 'g:g1', 'update', 'The raid starts at 21:00 on Fridays', 'The raid starts at 20:30 on Fridays', 2, 'user:u1', '', '{}', 1795837179882);
INSERT INTO kioku_901f6da.memory_history VALUES (8, 4, 'g:g1', 'delete', 'The guild bank password is kept by the officers', '', 2, 'user:u1', 'not for the bot', '{}', 1795837179895);


--
-- Data for Name: memory_jobs; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.memory_jobs VALUES (1, 'extract', 'g1/c1', '{"channel_id":"c1","guild_id":"g1"}', 'queued', 0, 5, 1795837179916, '', 0, '', 1795837179916, 1795837179916, 0);


--
-- Data for Name: model_calls; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: pinned_changes; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: pipeline_cursors; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: pipeline_runs; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: relation_sources; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: relations; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.schema_migrations VALUES ('0001_schema.sql', '8850a15b1b1586fb46415cc4946c3491e749e2e253212cff3753789c768c914d', 1795837179578);
INSERT INTO kioku_901f6da.schema_migrations VALUES ('0002_guild_language.sql', '9f58fde09e09304447584ecff838240a74de251825945bd9a01cb7d1bb72b133', 1795837179680);
INSERT INTO kioku_901f6da.schema_migrations VALUES ('0003_facts_channels_guilds.sql', '2a5cb86d80ca182d45ad3f7f400fbba0ec762e47b5de84e6af032b387f351ea8', 1795837179769);
INSERT INTO kioku_901f6da.schema_migrations VALUES ('0004_maintenance.sql', '23841471d273d5ae441892904062ae15b135a82d5a4cc644217fc6870c8732f8', 1795837179807);
INSERT INTO kioku_901f6da.schema_migrations VALUES ('0005_change_notices.sql', '28fdcc12331f21aecf06049006d0033906eacf047ada4ca2dc44149146c0a912', 1795837179810);
INSERT INTO kioku_901f6da.schema_migrations VALUES ('0006_pinned_index.sql', 'c18d4a8c3f61390dec9bef4df08fb3ac7b42e49aa769c7f55de2ccf9edea15fa', 1795837179819);


--
-- Data for Name: transcripts; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.transcripts VALUES (1, 'g1', 'c1', 'u1', 'Aiko', 'user', 'who brings the snacks?', 't0', 1795837179910, 0);
INSERT INTO kioku_901f6da.transcripts VALUES (2, 'g1', 'c1', 'u1', 'Aiko', 'user', 'Kenji does, as always', 't1', 1795837179913, 0);


--
-- Data for Name: user_settings; Type: TABLE DATA; Schema: kioku_901f6da; Owner: -
--

INSERT INTO kioku_901f6da.user_settings VALUES ('u2', 'full', 0, 1795837179898);


--
-- Name: entities_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.entities_id_seq', 5, true);


--
-- Name: maintenance_repairs_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.maintenance_repairs_id_seq', 1, false);


--
-- Name: memories_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.memories_id_seq', 6, true);


--
-- Name: memory_history_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.memory_history_id_seq', 8, true);


--
-- Name: memory_jobs_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.memory_jobs_id_seq', 1, true);


--
-- Name: relations_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.relations_id_seq', 1, false);


--
-- Name: transcripts_id_seq; Type: SEQUENCE SET; Schema: kioku_901f6da; Owner: -
--

SELECT pg_catalog.setval('kioku_901f6da.transcripts_id_seq', 2, true);


--
-- Name: confirmations confirmations_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.confirmations
    ADD CONSTRAINT confirmations_pkey PRIMARY KEY (token);


--
-- Name: embeddings embeddings_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.embeddings
    ADD CONSTRAINT embeddings_pkey PRIMARY KEY (content_hash, model);


--
-- Name: entities entities_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.entities
    ADD CONSTRAINT entities_pkey PRIMARY KEY (id);


--
-- Name: entity_aliases entity_aliases_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.entity_aliases
    ADD CONSTRAINT entity_aliases_pkey PRIMARY KEY (entity_id, alias);


--
-- Name: forget_fences forget_fences_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.forget_fences
    ADD CONSTRAINT forget_fences_pkey PRIMARY KEY (user_id);


--
-- Name: guild_channels guild_channels_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.guild_channels
    ADD CONSTRAINT guild_channels_pkey PRIMARY KEY (guild_id, channel_id);


--
-- Name: guild_departures guild_departures_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.guild_departures
    ADD CONSTRAINT guild_departures_pkey PRIMARY KEY (guild_id);


--
-- Name: guild_onboarding guild_onboarding_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.guild_onboarding
    ADD CONSTRAINT guild_onboarding_pkey PRIMARY KEY (guild_id);


--
-- Name: guild_settings guild_settings_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.guild_settings
    ADD CONSTRAINT guild_settings_pkey PRIMARY KEY (guild_id);


--
-- Name: maintenance_repairs maintenance_repairs_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.maintenance_repairs
    ADD CONSTRAINT maintenance_repairs_pkey PRIMARY KEY (id);


--
-- Name: memories memories_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memories
    ADD CONSTRAINT memories_pkey PRIMARY KEY (id);


--
-- Name: memory_counts memory_counts_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memory_counts
    ADD CONSTRAINT memory_counts_pkey PRIMARY KEY (scope_key);


--
-- Name: memory_entities memory_entities_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memory_entities
    ADD CONSTRAINT memory_entities_pkey PRIMARY KEY (memory_id, entity_id);


--
-- Name: memory_evidence memory_evidence_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memory_evidence
    ADD CONSTRAINT memory_evidence_pkey PRIMARY KEY (memory_id, message_id);


--
-- Name: memory_history memory_history_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memory_history
    ADD CONSTRAINT memory_history_pkey PRIMARY KEY (id);


--
-- Name: memory_jobs memory_jobs_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.memory_jobs
    ADD CONSTRAINT memory_jobs_pkey PRIMARY KEY (id);


--
-- Name: model_calls model_calls_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.model_calls
    ADD CONSTRAINT model_calls_pkey PRIMARY KEY (budget_key);


--
-- Name: pinned_changes pinned_changes_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.pinned_changes
    ADD CONSTRAINT pinned_changes_pkey PRIMARY KEY (scope_key);


--
-- Name: pipeline_cursors pipeline_cursors_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.pipeline_cursors
    ADD CONSTRAINT pipeline_cursors_pkey PRIMARY KEY (guild_id, channel_id);


--
-- Name: pipeline_runs pipeline_runs_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.pipeline_runs
    ADD CONSTRAINT pipeline_runs_pkey PRIMARY KEY (name);


--
-- Name: relation_sources relation_sources_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.relation_sources
    ADD CONSTRAINT relation_sources_pkey PRIMARY KEY (relation_id, user_id);


--
-- Name: relations relations_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.relations
    ADD CONSTRAINT relations_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (name);


--
-- Name: transcripts transcripts_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.transcripts
    ADD CONSTRAINT transcripts_pkey PRIMARY KEY (id);


--
-- Name: user_settings user_settings_pkey; Type: CONSTRAINT; Schema: kioku_901f6da; Owner: -
--

ALTER TABLE ONLY kioku_901f6da.user_settings
    ADD CONSTRAINT user_settings_pkey PRIMARY KEY (user_id);


--
-- Name: entities_member; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE UNIQUE INDEX entities_member ON kioku_901f6da.entities USING btree (scope_key, user_id) WHERE (user_id <> ''::text);


--
-- Name: entities_name; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX entities_name ON kioku_901f6da.entities USING btree (scope_key, normalized);


--
-- Name: entities_orphan; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX entities_orphan ON kioku_901f6da.entities USING btree (id) WHERE (mentions <= 0);


--
-- Name: entities_top; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX entities_top ON kioku_901f6da.entities USING btree (scope_key, mentions);


--
-- Name: entities_user; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX entities_user ON kioku_901f6da.entities USING btree (user_id) WHERE (user_id <> ''::text);


--
-- Name: entity_aliases_lookup; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX entity_aliases_lookup ON kioku_901f6da.entity_aliases USING btree (scope_key, alias);


--
-- Name: guild_departures_due; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX guild_departures_due ON kioku_901f6da.guild_departures USING btree (purge_after);


--
-- Name: maintenance_repairs_run; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX maintenance_repairs_run ON kioku_901f6da.maintenance_repairs USING btree (run_at);


--
-- Name: memories_author; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_author ON kioku_901f6da.memories USING btree (author_id) WHERE (author_id <> ''::text);


--
-- Name: memories_conversation; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_conversation ON kioku_901f6da.memories USING btree (scope_key, channel_id, id) WHERE (deleted_at IS NULL);


--
-- Name: memories_guild; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_guild ON kioku_901f6da.memories USING btree (guild_id);


--
-- Name: memories_hash; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_hash ON kioku_901f6da.memories USING btree (content_hash);


--
-- Name: memories_live_hash; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_live_hash ON kioku_901f6da.memories USING btree (scope_key, content_hash) WHERE (deleted_at IS NULL);


--
-- Name: memories_pinned_live; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_pinned_live ON kioku_901f6da.memories USING btree (scope_key, id) WHERE ((pinned <> 0) AND (deleted_at IS NULL));


--
-- Name: memories_scope_live; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_scope_live ON kioku_901f6da.memories USING btree (scope_key, id) WHERE (deleted_at IS NULL);


--
-- Name: memories_subject; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_subject ON kioku_901f6da.memories USING btree (subject_id) WHERE (subject_id <> ''::text);


--
-- Name: memories_tombstones; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_tombstones ON kioku_901f6da.memories USING btree (deleted_at) WHERE (deleted_at IS NOT NULL);


--
-- Name: memories_trigrams; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_trigrams ON kioku_901f6da.memories USING gin (normalized public.gin_trgm_ops) WHERE (deleted_at IS NULL);


--
-- Name: memories_words; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memories_words ON kioku_901f6da.memories USING gin (search_tsv) WHERE (deleted_at IS NULL);


--
-- Name: memory_entities_entity; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_entities_entity ON kioku_901f6da.memory_entities USING btree (entity_id);


--
-- Name: memory_evidence_message; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_evidence_message ON kioku_901f6da.memory_evidence USING btree (message_id);


--
-- Name: memory_evidence_user; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_evidence_user ON kioku_901f6da.memory_evidence USING btree (user_id);


--
-- Name: memory_history_actor; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_history_actor ON kioku_901f6da.memory_history USING btree (actor);


--
-- Name: memory_history_created; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_history_created ON kioku_901f6da.memory_history USING btree (created_at);


--
-- Name: memory_history_memory; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_history_memory ON kioku_901f6da.memory_history USING btree (memory_id, id);


--
-- Name: memory_history_scope; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_history_scope ON kioku_901f6da.memory_history USING btree (scope_key, id);


--
-- Name: memory_jobs_dedup; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE UNIQUE INDEX memory_jobs_dedup ON kioku_901f6da.memory_jobs USING btree (kind, dedup_key) WHERE (state = ANY (ARRAY['queued'::text, 'leased'::text]));


--
-- Name: memory_jobs_finished; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_jobs_finished ON kioku_901f6da.memory_jobs USING btree (state, updated_at) WHERE (state = ANY (ARRAY['done'::text, 'dead'::text]));


--
-- Name: memory_jobs_leased; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_jobs_leased ON kioku_901f6da.memory_jobs USING btree (leased_until) WHERE (state = 'leased'::text);


--
-- Name: memory_jobs_ready; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX memory_jobs_ready ON kioku_901f6da.memory_jobs USING btree (state, run_after);


--
-- Name: relation_sources_user; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX relation_sources_user ON kioku_901f6da.relation_sources USING btree (user_id);


--
-- Name: relations_edge; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE UNIQUE INDEX relations_edge ON kioku_901f6da.relations USING btree (source_id, target_id, type);


--
-- Name: relations_scope; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX relations_scope ON kioku_901f6da.relations USING btree (scope_key);


--
-- Name: relations_target; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX relations_target ON kioku_901f6da.relations USING btree (target_id);


--
-- Name: transcripts_channel; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX transcripts_channel ON kioku_901f6da.transcripts USING btree (guild_id, channel_id, id);


--
-- Name: transcripts_created; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX transcripts_created ON kioku_901f6da.transcripts USING btree (created_at);


--
-- Name: transcripts_message; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX transcripts_message ON kioku_901f6da.transcripts USING btree (message_id);


--
-- Name: transcripts_user; Type: INDEX; Schema: kioku_901f6da; Owner: -
--

CREATE INDEX transcripts_user ON kioku_901f6da.transcripts USING btree (user_id);


--
-- Name: embeddings embeddings_notify_insert; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER embeddings_notify_insert AFTER INSERT ON kioku_901f6da.embeddings REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_901f6da.kioku_embeddings_notify();


--
-- Name: embeddings embeddings_notify_update; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER embeddings_notify_update AFTER UPDATE ON kioku_901f6da.embeddings REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_901f6da.kioku_embeddings_notify();


--
-- Name: entities entities_deleted; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER entities_deleted AFTER DELETE ON kioku_901f6da.entities FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_entities_deleted();


--
-- Name: forget_fences forget_fences_notify; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER forget_fences_notify AFTER INSERT OR UPDATE ON kioku_901f6da.forget_fences FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_fences_notify();


--
-- Name: guild_settings guild_settings_notify; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER guild_settings_notify AFTER INSERT OR DELETE OR UPDATE ON kioku_901f6da.guild_settings FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_settings_notify();


--
-- Name: memories memories_changed; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER memories_changed AFTER INSERT OR DELETE OR UPDATE ON kioku_901f6da.memories FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_memories_changed();


--
-- Name: memories memories_notify_delete; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER memories_notify_delete AFTER DELETE ON kioku_901f6da.memories REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_901f6da.kioku_memories_notify();


--
-- Name: memories memories_notify_insert; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER memories_notify_insert AFTER INSERT ON kioku_901f6da.memories REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_901f6da.kioku_memories_notify();


--
-- Name: memories memories_notify_update; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER memories_notify_update AFTER UPDATE ON kioku_901f6da.memories REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kioku_901f6da.kioku_memories_notify();


--
-- Name: memory_entities memory_entities_changed; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER memory_entities_changed AFTER INSERT OR DELETE ON kioku_901f6da.memory_entities FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_memory_entities_changed();


--
-- Name: relations relations_changed; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER relations_changed AFTER INSERT OR DELETE OR UPDATE ON kioku_901f6da.relations FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_relations_changed();


--
-- Name: user_settings user_settings_notify; Type: TRIGGER; Schema: kioku_901f6da; Owner: -
--

CREATE TRIGGER user_settings_notify AFTER INSERT OR DELETE OR UPDATE ON kioku_901f6da.user_settings FOR EACH ROW EXECUTE FUNCTION kioku_901f6da.kioku_settings_notify();


--
-- PostgreSQL database dump complete
--


