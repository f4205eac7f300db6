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
		teach    int
		chans    string
		learning string
		updated  int64
	)
	err := s.db.read.QueryRowContext(ctx, `SELECT self_teaching, pipeline_mode, auto_reply_channels, persona,
		editor_role_id, language, learning_channels, updated_at FROM guild_settings WHERE guild_id = ?`, guildID).
		Scan(&teach, &gs.PipelineMode, &chans, &gs.Persona, &gs.EditorRoleID, &gs.Language, &learning, &updated)
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
	if err := json.Unmarshal([]byte(learning), &gs.LearningChannels); err != nil {
		return gs, fmt.Errorf("couldn't decode learning channels of guild %s: %w", guildID, err)
	}
	return gs, nil
}

// SaveGuildSettings stores gs whole but for its LearningChannels, which SetChannelLearning
// changes: a settings form read before a channel was switched off must not switch it back
// on when it is saved.
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

// SetChannelLearning switches learning on or off in a guild channel (memory.GuildSettings
// LearningChannels). Switching it off also stops what the channel has not been learned
// from yet, in the same transaction: its turns after the extraction cursor, and those of
// threads (the channel's threads the caller knows of, which follow the channel unless
// switched themselves), are marked so that extraction never reads them, and their queued
// or running extraction jobs drop what they read (a running one loses its lease, so its
// commit fails); their next run finds nothing to read. It returns the number of turns it
// marked. Switching on applies to turns stored from then on: what was said while the
// channel did not learn stays unlearned.
func (s *Settings) SetChannelLearning(ctx context.Context, guildID, channelID string, on bool, threads ...string) (int, error) {
	if guildID == "" || channelID == "" {
		return 0, memory.Errorf(memory.EINVALID, "Learning is switched per server channel.")
	}
	change, _ := json.Marshal(map[string]bool{channelID: on})
	marked := 0
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		// Merged in the statement, so that two channels switched at once both stay switched.
		_, err := tx.ExecContext(ctx, `INSERT INTO guild_settings (guild_id, learning_channels, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (guild_id) DO UPDATE SET learning_channels = `+s.db.dialect.JSONMerge("guild_settings.learning_channels")+`,
			updated_at = excluded.updated_at`,
			guildID, string(change), s.db.nowMillis(), string(change))
		if err != nil {
			return fmt.Errorf("couldn't set learning of channel %s: %w", channelID, err)
		}
		if on {
			return nil
		}
		for _, ch := range append([]string{channelID}, threads...) {
			n, err := s.stopLearningTx(ctx, tx, guildID, ch)
			if err != nil {
				return err
			}
			marked += n
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return marked, nil
}

// stopLearningTx marks the turns of a channel after its extraction cursor unlearnable and
// sends its pending extraction back to read the transcript afresh.
func (s *Settings) stopLearningTx(ctx context.Context, tx *txn, guildID, channelID string) (int, error) {
	cursor, err := extractionCursor(ctx, tx, guildID, channelID)
	if err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `UPDATE transcripts SET learn = 0
		WHERE guild_id = ? AND channel_id = ? AND id > ? AND learn = 1 RETURNING id`, guildID, channelID, cursor)
	if err != nil {
		return 0, fmt.Errorf("couldn't stop learning in channel %s: %w", channelID, err)
	}
	var n int
	last, err := countMaxID(rows, &n)
	if err != nil {
		return 0, fmt.Errorf("couldn't stop learning in channel %s: %w", channelID, err)
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := s.db.rewindExtractionTx(ctx, tx, guildID, channelID, last); err != nil {
		return 0, err
	}
	return n, nil
}
