package main

import (
	"context"
	"time"

	"github.com/kioku-bot/kioku/ltm/postgres"
)

// errBackupOnPostgres is `kioku backup`'s answer on PostgreSQL: it copies SQLite files;
// PostgreSQL is backed up with its own tools.
var errBackupOnPostgres = postgres.ErrBackupOnPostgres

// openPostgres opens the PostgreSQL store KIOKU_DB names, applying its migrations, with the
// operator's memory caps.
func (app *App) openPostgres(ctx context.Context) (*backend, error) {
	s, err := postgres.Open(ctx, app.config.DB)
	if err != nil {
		return nil, err
	}
	s.MaxServerMemories = app.config.MaxServerMemories
	s.MaxMemberMemories = app.config.MaxMemberMemories
	// The keyword indexes are in this process's memory, as on SQLite: the same bound.
	s.KeywordIndexMax = app.config.KeywordIndexMemories
	return postgresBackend(s, redactURL(app.config.DB)), nil
}

// postgresBackend is the backend over an opened PostgreSQL store.
func postgresBackend(s *postgres.Store, where string) *backend {
	return &backend{
		kind: kindPostgres, where: where,
		Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Facts: s.Facts, Jobs: s.Jobs,
		Transcripts: s.Transcripts, Settings: s.Settings, Confirmations: s.Confirmations,
		Transfer: s.Transfer, Channels: s.Channels, Guilds: s.Guilds, Budgets: s.Budgets,
		Maintenance: s.Maintenance, Health: s.Health, Graph: s.Graph, Sessions: s.Sessions, Overview: s.Overview,
		now:           func() time.Time { return s.Now() },
		RecoverWindow: s.RecoverWindow,
		changes:       pgChanges{s},
		pool: func() poolStats {
			st := s.Pool().Stat()
			return poolStats{Total: st.TotalConns(), Idle: st.IdleConns(), InUse: st.AcquiredConns(),
				Max: st.MaxConns(), Acquires: st.AcquireCount()}
		},
		close: s.Close,
	}
}

// pgChanges is the PostgreSQL store's change feed as the forget watch uses it.
type pgChanges struct{ s *postgres.Store }

// OnForget calls fn for every forget-me the feed announces, this process's own included.
func (c pgChanges) OnForget(fn func(userID string, at time.Time)) {
	c.s.OnChange(func(ch postgres.Change) {
		if ch.Kind == postgres.MemberForgotten {
			fn(ch.UserID, ch.At)
		}
	})
}

// Sync waits until the feed has delivered every change committed before the call.
func (c pgChanges) Sync(ctx context.Context) error { return c.s.SyncChanges(ctx) }
