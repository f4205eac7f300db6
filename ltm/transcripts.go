package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// AppendTurn durably stores a turn (with credentials redacted) and returns its id. The chat
// turn calls it before any model call, so a failing model never loses what people said.
func (s *Transcripts) AppendTurn(ctx context.Context, t memory.Turn) (int64, error) {
	if t.Role != memory.RoleUser && t.Role != memory.RoleAssistant {
		return 0, fmt.Errorf("couldn't append turn: unknown role %q", t.Role)
	}
	if t.ChannelID == "" || t.UserID == "" {
		return 0, fmt.Errorf("couldn't append turn: channel and user are required")
	}
	created := millis(t.CreatedAt)
	if created == 0 {
		created = s.db.nowMillis()
	}
	var id int64
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		return s.db.stmts.on(tx).QueryRowContext(ctx, appendTurnSQL,
			t.GuildID, t.ChannelID, t.UserID, t.AuthorName, t.Role, memory.RedactSecrets(t.Content), t.MessageID,
			created, boolInt(t.CanEditServer), boolInt(!t.NoLearning)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't append turn: %w", err)
	}
	return id, nil
}

// appendTurnSQL stores one turn; every chat turn runs it twice, so the writer keeps it
// prepared (writeStmts).
const appendTurnSQL = `INSERT INTO transcripts (guild_id, channel_id, user_id, author_name, role,
	content, message_id, created_at, can_edit_server, learn) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`

// turnColumns are the transcript columns queryTurns reads.
const turnColumns = `id, guild_id, channel_id, user_id, author_name, role, content, message_id, created_at,
	can_edit_server, learn`

// RecentTurns returns up to limit of the newest turns of a channel, oldest first. In a DM
// (guildID "") only turns of userID are returned; in a guild channel every participant's
// turns are, since they were said in front of everyone there. Turns extraction may not
// read are returned too: a reply may still use what was just said (raw-first).
func (s *Transcripts) RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error) {
	if limit <= 0 {
		limit = 20
	}
	query := `SELECT ` + turnColumns + ` FROM transcripts WHERE guild_id = ? AND channel_id = ?`
	args := []any{guildID, channelID}
	if guildID == "" {
		query += ` AND user_id = ?`
		args = append(args, userID)
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	turns, err := s.queryTurns(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(turns)-1; i < j; i, j = i+1, j-1 {
		turns[i], turns[j] = turns[j], turns[i]
	}
	return turns, nil
}

// TurnsAfter returns up to limit turns of a channel with id > afterID, oldest first; the
// pipeline reads what it has not extracted yet with it. Turns said where kioku does not
// learn (memory.Turn.NoLearning) are never returned: extraction must not read them.
func (s *Transcripts) TurnsAfter(ctx context.Context, guildID, channelID string, afterID int64, limit int) ([]memory.Turn, error) {
	if limit <= 0 {
		limit = 100
	}
	return s.queryTurns(ctx, `SELECT `+turnColumns+` FROM transcripts
		WHERE guild_id = ? AND channel_id = ? AND id > ? AND learn = 1 ORDER BY id LIMIT ?`,
		guildID, channelID, afterID, limit)
}

func (s *Transcripts) queryTurns(ctx context.Context, query string, args ...any) ([]memory.Turn, error) {
	// Kept prepared per reader (the statement texts are few and fixed): every chat turn
	// reads its channel's recent turns.
	rows, err := s.db.recall.stmts.query(ctx, s.db.read, query, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read transcript: %w", err)
	}
	defer rows.Close()
	var out []memory.Turn
	for rows.Next() {
		var (
			t       memory.Turn
			created int64
			canEdit int
			learn   int
		)
		if err := rows.Scan(&t.ID, &t.GuildID, &t.ChannelID, &t.UserID, &t.AuthorName, &t.Role, &t.Content,
			&t.MessageID, &created, &canEdit, &learn); err != nil {
			return nil, fmt.Errorf("couldn't read transcript row: %w", err)
		}
		t.CreatedAt, t.CanEditServer, t.NoLearning = fromMillis(created), canEdit != 0, learn == 0
		// Rows written before the detector knew a credential's shape may still hold
		// one until the upgrade's re-scan reaches them; every reader (the chat prompt,
		// the pipeline's extraction) gets them redacted meanwhile.
		t.Content = memory.RedactSecrets(t.Content)
		out = append(out, t)
	}
	return out, rows.Err()
}

// CountTurns returns how many transcript turns belong to userID.
func (s *Transcripts) CountTurns(ctx context.Context, userID string) (int, error) {
	var n int
	err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM transcripts WHERE user_id = ?`, userID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("couldn't count turns of user %s: %w", userID, err)
	}
	return n, nil
}

// UserTurns returns up to limit of userID's newest transcript turns (theirs and the bot's
// replies to them) across every channel and DM, newest first, redacted like every read.
// The caller decides which channels' turns the member may see.
func (s *Transcripts) UserTurns(ctx context.Context, userID string, limit int) ([]memory.Turn, error) {
	if limit <= 0 {
		limit = 20
	}
	return s.queryTurns(ctx, `SELECT `+turnColumns+` FROM transcripts WHERE user_id = ? ORDER BY id DESC LIMIT ?`,
		userID, min(limit, 500))
}

// ExtractionCursor returns the id of the last transcript turn of a channel that extraction
// has read, 0 when it never ran there.
func (s *Transcripts) ExtractionCursor(ctx context.Context, guildID, channelID string) (int64, error) {
	return extractionCursor(ctx, s.db.read, guildID, channelID)
}

func extractionCursor(ctx context.Context, q querier, guildID, channelID string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT last_turn_id FROM pipeline_cursors WHERE guild_id = ? AND channel_id = ?`,
		guildID, channelID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't read extraction cursor of channel %s: %w", channelID, err)
	}
	return id, nil
}

// ExtractionBacklog counts the turns of a channel after its extraction cursor that
// extraction may read.
func (s *Transcripts) ExtractionBacklog(ctx context.Context, guildID, channelID string) (memory.Backlog, error) {
	var (
		b    memory.Backlog
		last sql.NullInt64
		err  error
	)
	if b.Cursor, err = s.ExtractionCursor(ctx, guildID, channelID); err != nil {
		return b, err
	}
	err = s.db.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE role = 'user'), max(created_at)
		FROM transcripts WHERE guild_id = ? AND channel_id = ? AND id > ? AND learn = 1`, guildID, channelID, b.Cursor).
		Scan(&b.Turns, &b.UserTurns, &last)
	if err != nil {
		return b, fmt.Errorf("couldn't count unextracted turns of channel %s: %w", channelID, err)
	}
	if last.Valid {
		b.LastAt = fromMillis(last.Int64)
	}
	return b, nil
}

// ChannelsWithBacklog lists up to limit channels that have turns newer than since after
// their extraction cursor, which extraction may read, for the sweep that re-arms
// extraction lost to a crash.
func (s *Transcripts) ChannelsWithBacklog(ctx context.Context, since time.Time, limit int) ([]memory.Channel, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT t.guild_id, t.channel_id FROM transcripts t
		LEFT JOIN pipeline_cursors c ON c.guild_id = t.guild_id AND c.channel_id = t.channel_id
		WHERE t.created_at >= ? AND t.id > coalesce(c.last_turn_id, 0) AND t.learn = 1
		GROUP BY t.guild_id, t.channel_id ORDER BY max(t.id) LIMIT ?`, millis(since), limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list channels with unextracted turns: %w", err)
	}
	defer rows.Close()
	var out []memory.Channel
	for rows.Next() {
		var c memory.Channel
		if err := rows.Scan(&c.GuildID, &c.ChannelID); err != nil {
			return nil, fmt.Errorf("couldn't read channel row: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
