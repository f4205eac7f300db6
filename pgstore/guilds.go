package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kioku-bot/kioku/ltm"
)

// Guilds are the servers the bot left, with their grace period before the purge, and the
// servers it welcomed, as ltm.Guilds (SPEC §2, §6): when the bot is removed from a guild,
// its data is deleted after a grace period unless the bot is added back first; `kioku
// guilds purge` deletes it at once.
type Guilds struct{ db *db }

// purgeBatch is the most rows one purge transaction deletes, so that the locks it holds
// are short and an interrupted purge resumes where it stopped.
const purgeBatch = ltm.DefaultRetentionBatch

// RecordDeparture notes that the bot was removed from guildID now and schedules the purge
// of its data grace later. A guild already departed keeps its first date: a repeated event
// (from any process) must not postpone the deletion people were promised.
func (s *Guilds) RecordDeparture(ctx context.Context, guildID string, grace time.Duration) (ltm.Departure, error) {
	if guildID == "" {
		return ltm.Departure{}, errors.New("couldn't record departure: no guild id")
	}
	if grace < 0 {
		return ltm.Departure{}, fmt.Errorf("couldn't record departure of guild %s: negative grace %s", guildID, grace)
	}
	now := s.db.Now()
	var left, purge int64
	err := s.db.read.QueryRowContext(ctx, `INSERT INTO guild_departures (guild_id, left_at, purge_after) VALUES (?, ?, ?)
		ON CONFLICT (guild_id) DO UPDATE SET guild_id = excluded.guild_id RETURNING left_at, purge_after`,
		guildID, millis(now), millis(now.Add(grace))).Scan(&left, &purge)
	if err != nil {
		return ltm.Departure{}, fmt.Errorf("couldn't record departure of guild %s: %w", guildID, err)
	}
	return ltm.Departure{GuildID: guildID, LeftAt: fromMillis(left), PurgeAfter: fromMillis(purge)}, nil
}

// CancelDeparture forgets the departure of guildID because the bot was added back before
// its purge was due, and reports whether there was one. A departure whose purge is due is
// not cancelled (it reports false): the server was told its data would be gone by then.
// joinedAt is when Discord says the bot joined the guild (GUILD_CREATE's joined_at): a
// departure recorded after it is kept, since that GUILD_CREATE is the connection's listing
// handled late, not a re-add. The zero time cancels any departure. A guild without a
// departure, the common case on every connect, costs one statement that deletes nothing.
func (s *Guilds) CancelDeparture(ctx context.Context, guildID string, joinedAt time.Time) (bool, error) {
	if guildID == "" {
		return false, nil
	}
	res, err := s.db.read.ExecContext(ctx, `DELETE FROM guild_departures WHERE guild_id = ? AND purge_after > ? AND left_at <= ?`,
		guildID, s.db.nowMillis(), joinedMillis(joinedAt))
	if err != nil {
		return false, storageError(fmt.Errorf("couldn't cancel departure of guild %s: %w", guildID, err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("couldn't cancel departure of guild %s: %w", guildID, err)
	}
	return n > 0, nil
}

// joinedMillis is joinedAt for the departure comparison: the zero time (unknown) counts as
// later than any departure.
func joinedMillis(joinedAt time.Time) int64 {
	if joinedAt.IsZero() {
		return math.MaxInt64
	}
	return joinedAt.UnixMilli()
}

// ClaimWelcome records that the bot is introducing itself to guildID now and reports
// whether it is the first to do so: true once per guild, whichever process asks, false for
// every later call (GUILD_CREATE arrives for every guild on every connect, and after a
// restart). The claim comes before the post, so two connects racing never both post;
// ReleaseWelcome hands the claim back when the post failed for a reason worth retrying.
func (s *Guilds) ClaimWelcome(ctx context.Context, guildID string) (bool, error) {
	if guildID == "" {
		return false, errors.New("couldn't claim welcome: no guild id")
	}
	res, err := s.db.read.ExecContext(ctx, `INSERT INTO guild_onboarding (guild_id, greeted_at) VALUES (?, ?)
		ON CONFLICT (guild_id) DO NOTHING`, guildID, s.db.nowMillis())
	if err != nil {
		return false, storageError(fmt.Errorf("couldn't claim welcome of guild %s: %w", guildID, err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("couldn't claim welcome of guild %s: %w", guildID, err)
	}
	return n == 1, nil
}

// ReleaseWelcome forgets a claim made by ClaimWelcome, so the next GUILD_CREATE of guildID
// tries the welcome again.
func (s *Guilds) ReleaseWelcome(ctx context.Context, guildID string) error {
	if _, err := s.db.read.ExecContext(ctx, `DELETE FROM guild_onboarding WHERE guild_id = ?`, guildID); err != nil {
		return storageError(fmt.Errorf("couldn't release welcome of guild %s: %w", guildID, err))
	}
	return nil
}

// Guilds returns every guild kioku holds data about (memories, transcripts, settings,
// channel records or a departure), by id, with what it holds.
func (s *Guilds) Guilds(ctx context.Context) ([]ltm.GuildSummary, error) {
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
	var out []ltm.GuildSummary
	for rows.Next() {
		var (
			g           ltm.GuildSummary
			left, purge sql.NullInt64
		)
		if err := rows.Scan(&g.GuildID, &g.ServerMemories, &g.PersonalMemories, &g.Forgotten, &g.Transcripts,
			&left, &purge); err != nil {
			return nil, fmt.Errorf("couldn't read guild: %w", err)
		}
		if left.Valid {
			g.Departure = &ltm.Departure{GuildID: g.GuildID, LeftAt: fromMillis(left.Int64), PurgeAfter: fromMillis(purge.Int64)}
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't list guilds: %w", err)
	}
	return out, nil
}
