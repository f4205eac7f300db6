package postgres_test

import (
	"context"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/memory"
)

// The aggregates satisfy the interfaces their consumers declare, so that `kioku run` can
// hand the bot, the pipeline and the chat budget a PostgreSQL store instead of SQLite's.
var (
	_ bot.Channels        = (*ltm.Channels)(nil) // postgres.Store.Channels is the service's
	_ bot.Guilds          = (*ltm.Guilds)(nil)   // postgres.Store.Guilds is the service's
	_ guildPurger         = (*ltm.Guilds)(nil)
	_ chat.BudgetStore    = (*ltm.Budgets)(nil) // postgres.Store.Budgets is the service's
	_ bot.Facts           = postgres.Store{}.Facts
	_ pipeline.FactWriter = postgres.Store{}.Facts
)

// guildPurger is what the retention task (pipeline.Housekeeping, beside Retention) and
// `kioku guilds purge` call on the guilds.
type guildPurger interface {
	PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error)
	PurgeGuild(ctx context.Context, guildID string) (memory.GuildPurge, error)
}
