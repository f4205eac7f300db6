package chat

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/keyrate"
	"github.com/kioku-bot/kioku/memory"
)

// The limits a message meets before it becomes a turn (SPEC §3 step 1, README "Limits"):
// the author's turn rate, the server's turn rate and the daily model budget. A refused
// message is not a turn: nothing of it is stored and the model is not asked; the author
// gets a polite reply saying why and when to try again, and may simply send it again.

// ModelBudget is the daily model budget a turn draws on; *DailyBudget satisfies it.
type ModelBudget interface {
	// Take spends one call of the budget of the conversation in guildID and channelID (a
	// DM when guildID is ""), when one is left. When none is, ok is false and resetAt is
	// when the budget starts afresh.
	Take(ctx context.Context, guildID, channelID string) (ok bool, resetAt time.Time, err error)
	// Spend counts calls already made in that conversation, whatever is left: a turn once
	// admitted runs to its end.
	Spend(ctx context.Context, guildID, channelID string, calls int) error
}

// BudgetStore counts model calls per budget key and UTC day; the store's Budgets satisfy
// it. With limit > 0, AddModelCalls counts the calls only when the day's total stays within
// it, and reports whether it did.
type BudgetStore interface {
	ModelCalls(ctx context.Context, key, day string) (int, error)
	AddModelCalls(ctx context.Context, key, day string, n, limit int) (total int, ok bool, err error)
}

// DailyBudget is the daily model budget of each server, and of each member's DMs: at most
// limit model calls per UTC day, chat turns and the background pipeline's extraction and
// decisions together (the pipeline takes one call at a time through Take as well). When it
// is spent, turns there get a reply saying so and the pipeline's jobs there wait for
// 00:00 UTC; other servers are not affected.
//
// The count lives in the store, so a restart does not reset it and every process on the
// same database shares it. A DM's budget is its member's: the DM channel is the key, as it
// is one member's and the pipeline's jobs for DMs name it.
type DailyBudget struct {
	limit int
	store BudgetStore
	now   func() time.Time
}

// NewDailyBudget allows limit model calls per UTC day to each server and each member's DMs,
// counted in store and dated by now; limit <= 0 means no limit, and then the store is never
// touched.
func NewDailyBudget(limit int, store BudgetStore, now func() time.Time) *DailyBudget {
	if now == nil {
		now = time.Now
	}
	return &DailyBudget{limit: limit, store: store, now: now}
}

// Limit is the calls allowed per day to each budget; <= 0 means no limit.
func (b *DailyBudget) Limit() int { return b.limit }

// UsedToday returns the calls counted today (UTC) for the server guildID and the daily
// limit (<= 0: none, and then nothing is counted and used is 0).
func (b *DailyBudget) UsedToday(ctx context.Context, guildID string) (used, limit int, err error) {
	if b.limit <= 0 {
		return 0, b.limit, nil
	}
	used, err = b.store.ModelCalls(ctx, budgetKey(guildID, ""), b.now().UTC().Format(time.DateOnly))
	if err != nil {
		return 0, b.limit, fmt.Errorf("couldn't read the daily model budget: %w", err)
	}
	return used, b.limit, nil
}

// Take spends one call of the budget of the conversation in guildID and channelID, if one
// is left; resetAt is the next 00:00 UTC.
func (b *DailyBudget) Take(ctx context.Context, guildID, channelID string) (ok bool, resetAt time.Time, err error) {
	return b.TakeKey(ctx, budgetKey(guildID, channelID))
}

// TakeKey is Take for the budget named key (memory.Payer's Key): the embedding calls of
// searches and of the embedding tracker draw on the same budgets as chat turns.
func (b *DailyBudget) TakeKey(ctx context.Context, key string) (ok bool, resetAt time.Time, err error) {
	if b.limit <= 0 {
		return true, time.Time{}, nil
	}
	now := b.now().UTC()
	_, ok, err = b.store.AddModelCalls(ctx, key, now.Format(time.DateOnly), 1, b.limit)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("couldn't check the daily model budget: %w", err)
	}
	return ok, now.Truncate(24 * time.Hour).Add(24 * time.Hour), nil
}

// Spend counts calls made in the conversation in guildID and channelID, beyond the limit if
// need be.
func (b *DailyBudget) Spend(ctx context.Context, guildID, channelID string, calls int) error {
	if b.limit <= 0 || calls <= 0 {
		return nil
	}
	now := b.now().UTC()
	if _, _, err := b.store.AddModelCalls(ctx, budgetKey(guildID, channelID), now.Format(time.DateOnly), calls, 0); err != nil {
		return fmt.Errorf("couldn't count model calls against the daily budget: %w", err)
	}
	return nil
}

// Used returns the calls counted today against the budget of the conversation in guildID
// and channelID.
func (b *DailyBudget) Used(ctx context.Context, guildID, channelID string) (int, error) {
	if b.limit <= 0 {
		return 0, nil
	}
	return b.store.ModelCalls(ctx, budgetKey(guildID, channelID), b.now().UTC().Format(time.DateOnly))
}

// budgetKey names the budget a conversation draws on: its server's (the server's scope
// key, "g:" and the guild, which a server's purge clears), or in a DM its member's ("dm:"
// and the DM channel). The pipeline's fair share of its hourly budget uses the same names.
func budgetKey(guildID, channelID string) string {
	if guildID != "" {
		return memory.ServerOwner(guildID).Key()
	}
	return "dm:" + channelID
}

// turnGate is what a message meets beyond its author's rate: the guild's rate (nil: none)
// and the daily model budget (nil: none).
type turnGate struct {
	guild *keyrate.Limiter
	daily ModelBudget
}

func newTurnGate(guildPerMinute int, daily ModelBudget) turnGate {
	g := turnGate{daily: daily}
	if guildPerMinute > 0 {
		g.guild = keyrate.New(guildPerMinute)
	}
	return g
}

// admit runs the checks that may refuse a message before it becomes a turn: the author's
// rate, the server's rate and the daily model budget, in that order. A refusal comes back
// as the Reply to send with ok false; whatever earlier checks took is given back then, as
// the message was no turn. The model calls of an admitted turn beyond the first, which
// admit takes, are counted by spendBudget when the turn's tool loop is over.
func (e *Engine) admit(ctx context.Context, log *slog.Logger, req Request) (Reply, bool, error) {
	now := e.cfg.Now()
	var undo []func()
	refuse := func() {
		for _, u := range undo {
			u()
		}
	}
	u, wait, ok := e.limits.Take(req.UserID, now)
	if !ok {
		log.InfoContext(ctx, "rate limited", slog.Duration("retry_in", wait))
		return Reply{RateLimited: true, Text: rateLimitText(wait), Canned: CannedRateLimited, RetryAfter: wait}, false, nil
	}
	undo = append(undo, u)
	if e.gate.guild != nil && req.GuildID != "" {
		u, wait, ok := e.gate.guild.Take(req.GuildID, now)
		if !ok {
			refuse()
			log.InfoContext(ctx, "rate limited", slog.String("limit", "guild"), slog.Duration("retry_in", wait))
			return Reply{RateLimited: true, Text: guildRateText(wait), Canned: CannedGuildRate, RetryAfter: wait}, false, nil
		}
		undo = append(undo, u)
	}
	if e.gate.daily != nil {
		ok, resetAt, err := e.gate.daily.Take(ctx, req.GuildID, req.ChannelID)
		if err != nil {
			refuse()
			return Reply{}, false, err
		}
		if !ok {
			refuse()
			log.InfoContext(ctx, "daily model budget spent", slog.Time("resets_at", resetAt))
			canned := CannedBudgetGuild
			if req.GuildID == "" {
				canned = CannedBudgetDM
			}
			return Reply{BudgetSpent: true, Text: budgetText(req.GuildID), Canned: canned}, false, nil
		}
	}
	return Reply{}, true, nil
}

// spendBudget counts the model calls of a turn beyond the first (which admit took) against
// the daily budget. It runs even when the turn's context ended: the calls were made.
func (e *Engine) spendBudget(ctx context.Context, log *slog.Logger, req Request, calls int) {
	if e.gate.daily == nil || calls <= 1 {
		return
	}
	if err := e.gate.daily.Spend(context.WithoutCancel(ctx), req.GuildID, req.ChannelID, calls-1); err != nil {
		log.WarnContext(ctx, "couldn't count model calls against the daily budget", slog.Int("calls", calls-1), slog.Any("err", err))
	}
}

// guildRateText is the polite reply to a message in a server over its turn rate.
func guildRateText(wait time.Duration) string {
	secs := max(1, int((wait+time.Second-1)/time.Second))
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return fmt.Sprintf("This server is sending me more messages than I can keep up with. Please wait about %d %s and try again.", secs, unit)
}

// budgetText is the reply to a message once its server's (or DMs') daily model budget is
// spent.
func budgetText(guildID string) string {
	if guildID == "" {
		return "Your daily model budget for DMs is used up; it resets at 00:00 UTC."
	}
	return "This server's daily model budget is used up; it resets at 00:00 UTC."
}
