package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// The operator's abuse limits (README "Limits") handed to the parts that enforce them.

// applyMemoryCaps sets the per-scope memory caps on store, for every command that writes
// through it: the bot, `kioku chat` and the `kioku memories` CLI alike.
func (app *App) applyMemoryCaps(store *ltm.Store) {
	store.MaxServerMemories = app.config.MaxServerMemories
	store.MaxMemberMemories = app.config.MaxMemberMemories
}

// dailyBudget is the daily model budget of each server and each member's DMs over store,
// shared by chat turns and the pipeline: both count in the database, so the budget holds
// across them and across restarts. A limit of 0 makes it unlimited.
func (app *App) dailyBudget(store *backend) *chat.DailyBudget {
	return chat.NewDailyBudget(app.config.GuildDailyLLMCalls, store.Budgets, func() time.Time { return store.Now() })
}

// readImportFile reads and checks the export file at path ("-": standard input) for
// `kioku memories import`, refusing one over memory.MaxImportBytes before reading it whole.
func readImportFile(app *App, path string) (memory.ExportFile, error) {
	var (
		r    io.Reader = app.Stdin
		size int64     = -1
	)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return memory.ExportFile{}, fmt.Errorf("couldn't read %s: %w", path, err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		r = f
	}
	return memory.ReadExport(r, size)
}

// nonNegativeInt is positiveInt that also takes 0, for limits where 0 turns something off.
func nonNegativeInt(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number, 0 or more, got %q", v)
		}
		*dst(c) = n
		return nil
	}
}

// turnQueue is the bot's TurnQueue for the operator's KIOKU_TURN_QUEUE: the bot reads 0 as
// its default and a negative number as no queue.
func (app *App) turnQueue() int {
	if app.config.TurnQueue == 0 {
		return -1
	}
	return app.config.TurnQueue
}
