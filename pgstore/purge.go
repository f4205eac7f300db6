package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// PurgeGuild hard-deletes everything kioku holds about guildID, as ltm's does: its server
// memories and its members' personal memories that originated there (memories of every
// state, with their history, evidence and the embeddings no other memory uses), its graph,
// transcripts, extraction jobs and cursors, pending confirmations, settings, channel
// records, welcome, model-call count and finally its departure. DM-origin personal
// memories of the same members, and memories that originated in other guilds, are
// untouched. It works in transactions of at most purgeBatch rows, so it can be interrupted
// and run again; the departure row goes last, so an interrupted scheduled purge is
// finished by the next run.
func (s *Guilds) PurgeGuild(ctx context.Context, guildID string) (memory.GuildPurge, error) {
	var res memory.GuildPurge
	if guildID == "" {
		return res, errors.New("couldn't purge guild: no guild id")
	}
	serverKey := memory.ServerOwner(guildID).Key()
	// A step deletes at most purgeBatch rows per run and is run until it deletes fewer.
	type step struct {
		name string
		dst  *int
		run  func(tx *txn) (int, error)
	}
	deleteIn := func(dst *int, name, query string, args ...any) step {
		return step{name, dst, func(tx *txn) (int, error) { return execCount(ctx, tx, query, args...) }}
	}
	once := new(int) // steps of one row: their count is not reported, and they never repeat
	steps := []step{
		// Rows of the guild's memories, rows of proposals about its server memory that never
		// became a memory, and every row quoting words said in the guild (their origins: the
		// pipeline's proposals kept in members' personal scopes); older pipeline rows, written
		// before origins, only by their job, so this step runs before the jobs go.
		deleteIn(&res.History, "history", `DELETE FROM memory_history WHERE id IN (
			SELECT id FROM memory_history WHERE memory_id IN (SELECT id FROM memories WHERE guild_id = ?)
				OR scope_key = ? OR new_origin_guild = ? OR old_origin_guild = ?
				OR (actor = ? AND metadata LIKE '%"job"%' AND metadata::jsonb ->> 'job' IN (
					SELECT id::text FROM memory_jobs WHERE payload::jsonb ->> 'guild_id' = ?)) LIMIT ?)`,
			guildID, serverKey, guildID, guildID, memory.ActorPipeline, guildID, purgeBatch),
		// Extraction jobs name their guild in the payload; a leased one loses its lease, so
		// its worker's commit fails instead of writing the guild's memories back.
		deleteIn(&res.Jobs, "jobs", `DELETE FROM memory_jobs WHERE id IN (
			SELECT id FROM memory_jobs WHERE payload::jsonb ->> 'guild_id' = ? LIMIT ?)`, guildID, purgeBatch),
		deleteIn(&res.Evidence, "evidence", `DELETE FROM memory_evidence WHERE (memory_id, message_id) IN (
			SELECT memory_id, message_id FROM memory_evidence
			WHERE memory_id IN (SELECT id FROM memories WHERE guild_id = ?) LIMIT ?)`, guildID, purgeBatch),
		{"memories", &res.Memories, func(tx *txn) (int, error) {
			n, embeddings, err := purgeGuildMemoriesTx(ctx, tx, guildID)
			res.Embeddings += embeddings
			return n, err
		}},
		{"graph", &res.Graph, func(tx *txn) (int, error) {
			// The guild's entities take their aliases, links and relations with them (a
			// trigger); then the entities of members' graphs only the purged memories named.
			n, err := execCount(ctx, tx, `DELETE FROM entities WHERE id IN (
				SELECT id FROM entities WHERE scope_key = ? LIMIT ?)`, serverKey, purgeBatch)
			if err != nil {
				return 0, err
			}
			orphans, err := collectOrphansTx(ctx, tx, purgeBatch)
			return n + orphans, err
		}},
		deleteIn(&res.Transcripts, "transcripts", `DELETE FROM transcripts WHERE id IN (
			SELECT id FROM transcripts WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch),
		deleteIn(&res.Settings, "cursors", `DELETE FROM pipeline_cursors WHERE (guild_id, channel_id) IN (
			SELECT guild_id, channel_id FROM pipeline_cursors WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch),
		deleteIn(&res.Settings, "channels", `DELETE FROM guild_channels WHERE (guild_id, channel_id) IN (
			SELECT guild_id, channel_id FROM guild_channels WHERE guild_id = ? LIMIT ?)`, guildID, purgeBatch),
		deleteIn(&res.Settings, "roles", `DELETE FROM guild_roles WHERE guild_id = ?`, guildID),
		// A pending forget preview of server memory lists the memories it would forget.
		deleteIn(&res.Settings, "confirmations", `DELETE FROM confirmations WHERE token IN (
			SELECT token FROM confirmations WHERE scope_key = ? LIMIT ?)`, serverKey, purgeBatch),
		deleteIn(&res.Settings, "settings", `DELETE FROM guild_settings WHERE guild_id = ?`, guildID),
		// A server purged and added again is new to kioku: it gets the welcome again.
		deleteIn(once, "onboarding", `DELETE FROM guild_onboarding WHERE guild_id = ?`, guildID),
		// The day's count of the daily model budget: ids and a number, but the guild's.
		deleteIn(once, "model calls", `DELETE FROM model_calls WHERE budget_key = ?`, serverKey),
		deleteIn(once, "departure", `DELETE FROM guild_departures WHERE guild_id = ?`, guildID),
	}
	for _, st := range steps {
		for {
			var n int
			err := s.db.withWriteTx(ctx, func(tx *txn) error {
				var err error
				n, err = st.run(tx)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("couldn't purge %s of guild %s: %w", st.name, guildID, err)
			}
			if st.dst == once {
				break
			}
			*st.dst += n
			if n < purgeBatch {
				break
			}
		}
	}
	return res, nil
}

// purgeGuildMemoriesTx hard-deletes up to purgeBatch memories that originated in guildID
// (server and personal, live or forgotten) and then the embeddings no remaining memory
// uses. Their history and evidence rows were deleted before.
func purgeGuildMemoriesTx(ctx context.Context, tx *txn, guildID string) (int, int, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM memories WHERE id IN (
		SELECT id FROM memories WHERE guild_id = ? ORDER BY id LIMIT ?) RETURNING content_hash`, guildID, purgeBatch)
	if err != nil {
		return 0, 0, err
	}
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return 0, 0, err
		}
		hashes = append(hashes, h)
	}
	if err := rows.Close(); err != nil {
		return 0, 0, err
	}
	if len(hashes) == 0 {
		return 0, 0, nil
	}
	// Vectors are shared by content across scopes: one another memory still uses stays.
	embeddings, err := execCount(ctx, tx, `DELETE FROM embeddings WHERE content_hash = ANY(?::text[])
		AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = embeddings.content_hash)`, distinctIDs(hashes))
	if err != nil {
		return 0, 0, err
	}
	return len(hashes), embeddings, nil
}

// PurgeDepartedGuilds purges every departed guild whose purge is due (PurgeGuild), in
// order of due date, and returns the sum of what was deleted and how many guilds were
// purged. The retention task runs it; several processes running it at once each delete
// what the other has not yet, and neither fails for the other.
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

// distinctIDs returns the non-empty ids, each once.
func distinctIDs(ids []string) []string {
	out := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
