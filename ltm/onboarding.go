package ltm

import (
	"context"
	"errors"
	"fmt"
)

// ClaimWelcome records that the bot is introducing itself to guildID now and reports
// whether it is the first to do so: true once per guild, false for every later call
// (GUILD_CREATE arrives for every guild on every connect, and after a restart). The claim
// comes before the post, so two connects racing never both post; ReleaseWelcome hands the
// claim back when the post failed for a reason worth retrying on the next connect.
func (s *Guilds) ClaimWelcome(ctx context.Context, guildID string) (bool, error) {
	if guildID == "" {
		return false, errors.New("couldn't claim welcome: no guild id")
	}
	var n int
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		var err error
		n, err = execCount(ctx, tx, `INSERT INTO guild_onboarding (guild_id, greeted_at) VALUES (?, ?)
			ON CONFLICT (guild_id) DO NOTHING`, guildID, s.db.nowMillis())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("couldn't claim welcome of guild %s: %w", guildID, err)
	}
	return n == 1, nil
}

// ReleaseWelcome forgets a claim made by ClaimWelcome, so the next GUILD_CREATE of guildID
// tries the welcome again.
func (s *Guilds) ReleaseWelcome(ctx context.Context, guildID string) error {
	err := s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM guild_onboarding WHERE guild_id = ?`, guildID)
		return err
	})
	if err != nil {
		return fmt.Errorf("couldn't release welcome of guild %s: %w", guildID, err)
	}
	return nil
}
