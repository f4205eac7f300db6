package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// UserSettings returns the user's settings, or the defaults when they never changed any.
func (s *Settings) UserSettings(ctx context.Context, userID string) (memory.UserSettings, error) {
	us := memory.UserSettings{UserID: userID, Privacy: memory.PrivacyNormal}
	var (
		cross   int
		updated int64
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT privacy, cross_server, updated_at FROM user_settings WHERE user_id = ?`,
		userID).Scan(&us.Privacy, &cross, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return us, nil
	}
	if err != nil {
		return us, fmt.Errorf("couldn't read settings of user %s: %w", userID, err)
	}
	us.CrossServer, us.UpdatedAt = cross != 0, fromMillis(updated)
	return us, nil
}

// SetPrivacy sets a user's privacy level. Switching to partial or full also clears the
// checkpoints of unfinished pipeline jobs (and takes back their leases), since those may
// hold facts about the user extracted under the old level; the jobs re-extract under the
// new one.
func (s *Settings) SetPrivacy(ctx context.Context, userID string, p memory.Privacy) error {
	if !p.Valid() {
		return memory.Errorf(memory.EINVALID, "Unknown privacy level %q: use normal, partial or full.", string(p))
	}
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO user_settings (user_id, privacy, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET privacy = excluded.privacy, updated_at = excluded.updated_at`,
			userID, p, s.db.nowMillis())
		if err != nil {
			return fmt.Errorf("couldn't set privacy of user %s: %w", userID, err)
		}
		if p == memory.PrivacyPartial || p == memory.PrivacyFull {
			if _, err := s.db.clearCheckpointsTx(ctx, tx); err != nil {
				return fmt.Errorf("couldn't set privacy of user %s: %w", userID, err)
			}
		}
		return nil
	})
}

// SetCrossServer sets whether a user's personal memories may be used across guilds.
func (s *Settings) SetCrossServer(ctx context.Context, userID string, on bool) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO user_settings (user_id, cross_server, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET cross_server = excluded.cross_server, updated_at = excluded.updated_at`,
			userID, boolInt(on), s.db.nowMillis())
		if err != nil {
			return fmt.Errorf("couldn't set cross-server use of user %s: %w", userID, err)
		}
		return nil
	})
}

// GuildSettings returns a guild's settings, or the defaults.
func (s *Settings) GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error) {
	gs := memory.GuildSettings{GuildID: guildID, PipelineMode: memory.PipelineFull, Language: memory.LanguageAuto}
	var (
		teach   int
		chans   string
		updated int64
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT self_teaching, pipeline_mode, auto_reply_channels, persona,
		editor_role_id, language, updated_at FROM guild_settings WHERE guild_id = ?`, guildID).
		Scan(&teach, &gs.PipelineMode, &chans, &gs.Persona, &gs.EditorRoleID, &gs.Language, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return gs, nil
	}
	if err != nil {
		return gs, fmt.Errorf("couldn't read settings of guild %s: %w", guildID, err)
	}
	gs.SelfTeaching, gs.UpdatedAt = teach != 0, fromMillis(updated)
	if err := json.Unmarshal([]byte(chans), &gs.AutoReplyChannels); err != nil {
		return gs, fmt.Errorf("couldn't decode auto-reply channels of guild %s: %w", guildID, err)
	}
	return gs, nil
}

// SaveGuildSettings stores gs whole.
func (s *Settings) SaveGuildSettings(ctx context.Context, gs memory.GuildSettings) error {
	mode, err := gs.PipelineMode.ValidateGuild()
	if err != nil {
		return err
	}
	gs.PipelineMode = mode
	if len([]rune(gs.Persona)) > 4000 {
		return memory.Errorf(memory.EINVALID, "The persona prompt can be at most 4000 characters.")
	}
	lang, err := memory.ValidateLanguage(gs.Language)
	if err != nil {
		return err
	}
	chans, _ := json.Marshal(append([]string{}, gs.AutoReplyChannels...))
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO guild_settings (guild_id, self_teaching, pipeline_mode,
			auto_reply_channels, persona, editor_role_id, language, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (guild_id) DO UPDATE SET self_teaching = excluded.self_teaching,
			pipeline_mode = excluded.pipeline_mode, auto_reply_channels = excluded.auto_reply_channels,
			persona = excluded.persona, editor_role_id = excluded.editor_role_id, language = excluded.language,
			updated_at = excluded.updated_at`,
			gs.GuildID, boolInt(gs.SelfTeaching), gs.PipelineMode, string(chans), gs.Persona, gs.EditorRoleID, lang,
			s.db.nowMillis())
		if err != nil {
			return fmt.Errorf("couldn't save settings of guild %s: %w", gs.GuildID, err)
		}
		return nil
	})
}
