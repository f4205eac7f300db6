package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Leaving a server (SPEC §2, §6): when the bot is removed from a guild, its data is deleted
// after a grace period unless the bot is added back first; `kioku guilds purge` deletes it
// at once.

// RecordDeparture notes that the bot was removed from guildID now and schedules the purge
// of its data grace later. A guild already departed keeps its first date: a repeated event
// must not postpone the deletion people were promised.
func (s *Guilds) RecordDeparture(ctx context.Context, guildID string, grace time.Duration) (memory.Departure, error) {
	if guildID == "" {
		return memory.Departure{}, errors.New("couldn't record departure: no guild id")
	}
	if grace < 0 {
		return memory.Departure{}, fmt.Errorf("couldn't record departure of guild %s: negative grace %s", guildID, grace)
	}
	now := s.db.Now()
	var left, purge int64
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		return tx.QueryRowContext(ctx, `INSERT INTO guild_departures (guild_id, left_at, purge_after) VALUES (?, ?, ?)
			ON CONFLICT (guild_id) DO UPDATE SET guild_id = excluded.guild_id RETURNING left_at, purge_after`,
			guildID, millis(now), millis(now.Add(grace))).Scan(&left, &purge)
	})
	if err != nil {
		return memory.Departure{}, fmt.Errorf("couldn't record departure of guild %s: %w", guildID, err)
	}
	return memory.Departure{GuildID: guildID, LeftAt: fromMillis(left), PurgeAfter: fromMillis(purge)}, nil
}

// CancelDeparture forgets the departure of guildID because the bot was added back before
// its purge was due, and reports whether there was one. A departure whose purge is due is
// not cancelled (it reports false): the server was told its data would be gone by then,
// and the next purge run deletes it. GUILD_CREATE arrives for every guild on every
// connect, so a guild without a departure costs one read and no write.
// joinedAt is when Discord says the bot joined the guild (GUILD_CREATE's joined_at): a
// departure recorded after it is kept. The zero time cancels any departure.
func (s *Guilds) CancelDeparture(ctx context.Context, guildID string, joinedAt time.Time) (bool, error) {
	if guildID == "" {
		return false, nil
	}
	var pending bool
	if err := s.db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM guild_departures WHERE guild_id = ?)`,
		guildID).Scan(&pending); err != nil {
		return false, s.db.eng.StorageError(fmt.Errorf("couldn't read departure of guild %s: %w", guildID, err))
	}
	if !pending {
		return false, nil
	}
	var n int
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		// A GUILD_CREATE that says the bot joined before it left is the connection's
		// listing handled late (discordgo runs handlers concurrently), not a re-add.
		n, err = execCount(ctx, tx, `DELETE FROM guild_departures WHERE guild_id = ? AND purge_after > ? AND left_at <= ?`,
			guildID, s.db.nowMillis(), joinedMillis(joinedAt))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("couldn't cancel departure of guild %s: %w", guildID, err)
	}
	return n > 0, nil
}

// addPurge sums o into p.
func addPurge(p *memory.GuildPurge, o memory.GuildPurge) {
	p.Memories += o.Memories
	p.History += o.History
	p.Evidence += o.Evidence
	p.Embeddings += o.Embeddings
	p.Transcripts += o.Transcripts
	p.Jobs += o.Jobs
	p.Graph += o.Graph
	p.Settings += o.Settings
}

// purgeBatch is the most rows one purge transaction deletes, so a chat turn elsewhere never
// waits long for the write lock.
const purgeBatch = DefaultRetentionBatch

// PurgeGuild hard-deletes everything kioku holds about guildID: its server memories and
// its members' personal memories that originated there (memories of every state, with
// their history, evidence and the embeddings no other memory uses), its graph,
// transcripts, extraction jobs and cursors, pending confirmations, settings, channel
// records, welcome, model-call count and finally its departure. DM-origin personal memories of the same members, and memories
// that originated in other guilds, are untouched. It works in transactions of at most
// purgeBatch rows, so it can be interrupted and run again; the departure row goes last,
// so an interrupted scheduled purge is finished by the next run.
func (s *Guilds) PurgeGuild(ctx context.Context, guildID string) (memory.GuildPurge, error) {
	var res memory.GuildPurge
	if guildID == "" {
		return res, errors.New("couldn't purge guild: no guild id")
	}
	serverKey := memory.ServerOwner(guildID).Key()
	// Extraction jobs name their guild in the payload; a leased one loses its lease, so
	// its commit fails instead of writing the guild's memories back.
	d := s.db.dialect
	jobsOfGuild := `SELECT id FROM memory_jobs WHERE ` + d.JSONText("payload", "guild_id") + ` = ?`
	steps := []struct {
		name string
		dst  *int
		run  func(tx *txn) (int, error)
	}{
		{"history", &res.History, func(tx *txn) (int, error) {
			// Rows of the guild's memories, rows of proposals about its server memory that
			// never became a memory, and every row quoting words said in the guild (their
			// origins: the pipeline's proposals kept in members' personal scopes); older
			// pipeline rows, written before origins, only by their job, so this step runs
			// before the jobs go. The job ids compare as text: JSON gives back a number on
			// one engine and text on the other. The LIKE spares reading the JSON of rows
			// that name no job.
			return execCount(ctx, tx, `DELETE FROM memory_history WHERE id IN (
				SELECT id FROM memory_history WHERE memory_id IN (SELECT id FROM memories WHERE guild_id = ?)
					OR scope_key = ? OR new_origin_guild = ? OR old_origin_guild = ?
					OR (actor = ? AND metadata LIKE '%"job"%' AND CAST(`+d.JSONText("metadata", "job")+` AS TEXT) IN (
						SELECT CAST(id AS TEXT) FROM memory_jobs WHERE `+d.JSONText("payload", "guild_id")+` = ?)) LIMIT ?)`,
				guildID, serverKey, guildID, guildID, memory.ActorPipeline, guildID, purgeBatch)
		}},
		{"jobs", &res.Jobs, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_jobs WHERE id IN (`+jobsOfGuild+` LIMIT ?)`, guildID, purgeBatch)
		}},
		{"evidence", &res.Evidence, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM memory_evidence WHERE (memory_id, message_id) IN (
				SELECT memory_id, message_id FROM memory_evidence
				WHERE memory_id IN (SELECT id FROM memories WHERE guild_id = ?) LIMIT ?)`, guildID, purgeBatch)
		}},
		{"memories", &res.Memories, func(tx *txn) (int, error) {
			n, embeddings, err := s.purgeGuildMemoriesTx(ctx, tx, guildID)
			res.Embeddings += embeddings
			return n, err
		}},
		{"graph", &res.Graph, func(tx *txn) (int, error) {
			// The guild's entities take their aliases, links and relations with them; then
			// the entities of members' graphs that only the purged memories mentioned.
			n, err := execCount(ctx, tx, `DELETE FROM entities WHERE id IN (
				SELECT id FROM entities WHERE scope_key = ? LIMIT ?)`, serverKey, purgeBatch)
			if err != nil {
				return 0, err
			}
			orphans, err := collectOrphansTx(ctx, tx, purgeBatch)
			return n + orphans, err
		}},
		{"transcripts", &res.Transcripts, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM transcripts WHERE id IN (
				SELECT id FROM transcripts WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch)
		}},
		{"cursors", &res.Settings, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM pipeline_cursors WHERE (guild_id, channel_id) IN (
				SELECT guild_id, channel_id FROM pipeline_cursors WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch)
		}},
		{"channels", &res.Settings, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM guild_channels WHERE (guild_id, channel_id) IN (
				SELECT guild_id, channel_id FROM guild_channels WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch)
		}},
		{"roles", &res.Settings, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM guild_roles WHERE guild_id = ?`, guildID)
		}},
		{"confirmations", &res.Settings, func(tx *txn) (int, error) {
			// A pending forget preview of server memory lists the memories it would forget; a
			// held write made in the guild, server or personal, holds words said there.
			return execCount(ctx, tx, `DELETE FROM confirmations WHERE token IN (
				SELECT token FROM confirmations WHERE scope_key = ? OR (kind = '`+confirmWrite+`' AND `+
				d.JSONMayHold("payload", "guild_id")+` AND `+d.JSONText("payload", "guild_id")+` = ?) LIMIT ?)`,
				serverKey, guildID, purgeBatch)
		}},
		{"web sessions", &res.Sessions, func(tx *txn) (int, error) {
			// A session keeps the member's standing in the guild (roles read with the bot's
			// token): it is revoked, and a new sign-in finds no rules for the guild.
			return execCount(ctx, tx, `DELETE FROM web_sessions WHERE token_hash IN (
				SELECT token_hash FROM web_sessions WHERE guild_ids LIKE ? LIMIT ?)`, `%"`+guildID+`"%`, purgeBatch)
		}},
		{"settings", &res.Settings, func(tx *txn) (int, error) {
			return execCount(ctx, tx, `DELETE FROM guild_settings WHERE guild_id = ?`, guildID)
		}},
		{"onboarding", new(int), func(tx *txn) (int, error) {
			// A server purged and added again is new to kioku: it gets the welcome again.
			_, err := execCount(ctx, tx, `DELETE FROM guild_onboarding WHERE guild_id = ?`, guildID)
			return 0, err // one row: never repeat
		}},
		{"model calls", new(int), func(tx *txn) (int, error) {
			// The day's count of the daily model budget: ids and a number, but the guild's.
			_, err := execCount(ctx, tx, `DELETE FROM model_calls WHERE budget_key = ?`, serverKey)
			return 0, err // one row: never repeat
		}},
		{"departure", new(int), func(tx *txn) (int, error) {
			_, err := execCount(ctx, tx, `DELETE FROM guild_departures WHERE guild_id = ?`, guildID)
			return 0, err // one row: never repeat
		}},
	}
	for _, step := range steps {
		for {
			var n int
			err := s.db.withWriteTx(ctx, func(tx *txn) error {
				var err error
				n, err = step.run(tx)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("couldn't purge %s of guild %s: %w", step.name, guildID, err)
			}
			*step.dst += n
			if n < purgeBatch {
				break
			}
		}
	}
	return res, nil
}

// purgeGuildMemoriesTx hard-deletes up to purgeBatch memories that originated in guildID
// (server and personal, live or forgotten) and then the embeddings no remaining memory
// uses, and drops the deleted memories from the in-memory vector index. Their history and
// evidence rows were deleted before.
func (s *Guilds) purgeGuildMemoriesTx(ctx context.Context, tx *txn, guildID string) (int, int, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM memories WHERE id IN (
		SELECT id FROM memories WHERE guild_id = ? ORDER BY id LIMIT ?)
		RETURNING id, scope, user_id, guild_id, content_hash`, guildID, purgeBatch)
	if err != nil {
		return 0, 0, err
	}
	var (
		gone   []*memory.Memory
		hashes []string
	)
	for rows.Next() {
		m := &memory.Memory{}
		if err := rows.Scan(&m.ID, &m.Scope, &m.UserID, &m.GuildID, &m.Hash); err != nil {
			rows.Close()
			return 0, 0, err
		}
		gone = append(gone, m)
		hashes = append(hashes, m.Hash)
	}
	if err := rows.Close(); err != nil {
		return 0, 0, err
	}
	ids := make([]int64, len(gone))
	for i, m := range gone {
		ids[i] = m.ID
	}
	if err := s.db.uncountIDsTx(ctx, tx, ids); err != nil {
		return 0, 0, err
	}
	embeddings := 0
	if len(hashes) > 0 {
		// Vectors are shared by content across scopes: one another memory still uses stays.
		args := anySlice(distinctIDs(hashes))
		embeddings, err = execCount(ctx, tx, `DELETE FROM embeddings WHERE content_hash IN (`+placeholders(len(args))+`)
			AND NOT `+memoryHoldsHash("embeddings.content_hash"), args...)
		if err != nil {
			return 0, 0, err
		}
	}
	// Out of the vector index before the commit: should the commit fail, the rows stay and
	// only miss their vectors until the next sync, where the other order could let recall
	// return ids of deleted memories.
	for _, m := range gone {
		s.db.vectors.unindexMemory(m)
	}
	return len(gone), embeddings, nil
}

// PurgeDepartedGuilds purges every departed guild whose purge is due (PurgeGuild), in
// order of due date, and returns the sum of what was deleted and how many guilds were
// purged. The retention task runs it; where several processes run it at once (PostgreSQL),
// each deletes what the other has not yet, and neither fails for the other.
func (s *Guilds) PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error) {
	var total memory.GuildPurge
	rows, err := s.db.read.QueryContext(ctx, `SELECT guild_id FROM guild_departures WHERE purge_after <= ?
		ORDER BY purge_after, guild_id`, s.db.nowMillis())
	if err != nil {
		return total, 0, fmt.Errorf("couldn't read due departures: %w", err)
	}
	var due []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return total, 0, fmt.Errorf("couldn't read due departures: %w", err)
		}
		due = append(due, id)
	}
	if err := rows.Close(); err != nil {
		return total, 0, fmt.Errorf("couldn't read due departures: %w", err)
	}
	for i, id := range due {
		r, err := s.PurgeGuild(ctx, id)
		addPurge(&total, r)
		if err != nil {
			return total, i, err
		}
	}
	return total, len(due), nil
}

// Guilds returns every guild kioku holds data about (memories, transcripts, settings,
// channel records or a departure), by id.
func (s *Guilds) Guilds(ctx context.Context) ([]memory.GuildSummary, error) {
	rows, err := s.db.read.QueryContext(ctx, `WITH ids AS (
			SELECT guild_id FROM memories WHERE guild_id <> ''
			UNION SELECT guild_id FROM transcripts WHERE guild_id <> ''
			UNION SELECT guild_id FROM guild_settings
			UNION SELECT guild_id FROM guild_channels
			UNION SELECT guild_id FROM guild_roles
			UNION SELECT guild_id FROM guild_departures)
		SELECT ids.guild_id,
			(SELECT count(*) FROM memories m WHERE m.guild_id = ids.guild_id AND m.scope = 'server' AND m.deleted_at IS NULL),
			(SELECT count(*) FROM memories m WHERE m.guild_id = ids.guild_id AND m.scope = 'personal' AND m.deleted_at IS NULL),
			(SELECT count(*) FROM memories m WHERE m.guild_id = ids.guild_id AND m.deleted_at IS NOT NULL),
			(SELECT count(*) FROM transcripts t WHERE t.guild_id = ids.guild_id),
			d.left_at, d.purge_after
		FROM ids LEFT JOIN guild_departures d ON d.guild_id = ids.guild_id
		ORDER BY ids.guild_id`)
	if err != nil {
		return nil, fmt.Errorf("couldn't list guilds: %w", err)
	}
	defer rows.Close()
	var out []memory.GuildSummary
	for rows.Next() {
		var (
			g           memory.GuildSummary
			left, purge sql.NullInt64
		)
		if err := rows.Scan(&g.GuildID, &g.ServerMemories, &g.PersonalMemories, &g.Forgotten, &g.Transcripts,
			&left, &purge); err != nil {
			return nil, fmt.Errorf("couldn't read guild: %w", err)
		}
		if left.Valid {
			g.Departure = &memory.Departure{GuildID: g.GuildID, LeftAt: fromMillis(left.Int64), PurgeAfter: fromMillis(purge.Int64)}
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't list guilds: %w", err)
	}
	return out, nil
}

// joinedMillis is joinedAt for the departure comparison: the zero time (unknown) counts as
// later than any departure.
func joinedMillis(joinedAt time.Time) int64 {
	if joinedAt.IsZero() {
		return math.MaxInt64
	}
	return joinedAt.UnixMilli()
}
