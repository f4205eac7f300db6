package ltm

import (
	"context"
	"database/sql"
	"fmt"

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
		created = s.nowMillis()
	}
	var id int64
	err := s.withWriteTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO transcripts (guild_id, channel_id, user_id, author_name, role,
			content, message_id, created_at, can_edit_server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.GuildID, t.ChannelID, t.UserID, t.AuthorName, t.Role, memory.RedactSecrets(t.Content), t.MessageID,
			created, boolInt(t.CanEditServer)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't append turn: %w", err)
	}
	return id, nil
}

// RecentTurns returns up to limit of the newest turns of a channel, oldest first. In a DM
// (guildID "") only turns of userID are returned; in a guild channel every participant's
// turns are, since they were said in front of everyone there.
func (s *Transcripts) RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error) {
	if limit <= 0 {
		limit = 20
	}
	query := `SELECT id, guild_id, channel_id, user_id, author_name, role, content, message_id, created_at,
		can_edit_server FROM transcripts WHERE guild_id = ? AND channel_id = ?`
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
// pipeline reads what it has not extracted yet with it.
func (s *Transcripts) TurnsAfter(ctx context.Context, guildID, channelID string, afterID int64, limit int) ([]memory.Turn, error) {
	if limit <= 0 {
		limit = 100
	}
	return s.queryTurns(ctx, `SELECT id, guild_id, channel_id, user_id, author_name, role, content, message_id, created_at,
		can_edit_server FROM transcripts WHERE guild_id = ? AND channel_id = ? AND id > ? ORDER BY id LIMIT ?`,
		guildID, channelID, afterID, limit)
}

func (s *Transcripts) queryTurns(ctx context.Context, query string, args ...any) ([]memory.Turn, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
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
		)
		if err := rows.Scan(&t.ID, &t.GuildID, &t.ChannelID, &t.UserID, &t.AuthorName, &t.Role, &t.Content,
			&t.MessageID, &created, &canEdit); err != nil {
			return nil, fmt.Errorf("couldn't read transcript row: %w", err)
		}
		t.CreatedAt, t.CanEditServer = fromMillis(created), canEdit != 0
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
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM transcripts WHERE user_id = ?`, userID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("couldn't count turns of user %s: %w", userID, err)
	}
	return n, nil
}
