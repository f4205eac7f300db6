package pipeline

import (
	"context"
	"fmt"
	"time"
)

// DailyBudget is the daily model budget of each server and each member's DMs that the
// pipeline shares with chat turns (README "Limits"); cmd/kioku hands it the same budget the
// chat engine draws on. Take spends one call of the budget of the conversation in guildID
// and channelID (a DM when guildID is ""), when one is left; when none is, resetAt is when
// the budget starts afresh.
type DailyBudget interface {
	Take(ctx context.Context, guildID, channelID string) (ok bool, resetAt time.Time, err error)
}

// dailyBudgetError stops a job that needs a model call while its server's (or DMs') daily
// budget is spent. The job waits for resetAt, without losing an attempt; other servers'
// jobs go on.
type dailyBudgetError struct{ resetAt time.Time }

func (e *dailyBudgetError) Error() string {
	return fmt.Sprintf("this server's daily model budget is spent until %s", e.resetAt.Format(time.RFC3339))
}

// takeDaily spends one call of the daily budget of the job's conversation, or returns a
// dailyBudgetError when it is spent. Without a budget it allows everything.
func (p *worker) takeDaily(ctx context.Context, run *jobRun) error {
	if p.cfg.DailyBudget == nil {
		return nil
	}
	ok, resetAt, err := p.cfg.DailyBudget.Take(ctx, run.payload.GuildID, run.payload.ChannelID)
	if err != nil {
		return err
	}
	if !ok {
		return &dailyBudgetError{resetAt: resetAt}
	}
	return nil
}
