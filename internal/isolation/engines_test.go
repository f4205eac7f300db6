package isolation

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// The walk runs on both stores: the same bot, chat engine and pipeline over SQLite or
// PostgreSQL, checked by an oracle that reads the database directly.
const (
	engineSQLite   = "sqlite"
	enginePostgres = "postgres"
)

// engineParts is one opened store as its users see it.
type engineParts struct {
	bot  bot.Store
	pipe pipeline.Deps // the store's part of the pipeline's dependencies
	chat chat.Deps     // the store's part of the chat engine's
	db   *oracle
}

// openEngine opens a fresh store of the engine on the clock now, closed when t ends.
func openEngine(t *testing.T, ctx context.Context, engine string, now func() time.Time) engineParts {
	t.Helper()
	switch engine {
	case engineSQLite:
		path := filepath.Join(t.TempDir(), "kioku.db")
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		s.Now = now
		db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
		if err != nil {
			t.Fatalf("open oracle connection: %v", err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return engineParts{
			bot: bot.Store{Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Facts: s.Facts, Jobs: s.Jobs,
				Transcripts: s.Transcripts, Settings: s.Settings, Confirmations: s.Confirmations,
				Transfer: s.Transfer, Channels: s.Channels, Guilds: s.Guilds,
				Maintenance: s.Health, Now: s.Now, RecoverWindow: s.RecoverWindow},
			pipe: pipeline.Deps{Jobs: s.Jobs, Ledger: s.Jobs, Transcript: s.Transcripts, Facts: s.Facts,
				Candidates: struct {
					*ltm.Recall
					*ltm.Graph
				}{s.Recall, s.Graph}, Settings: s.Settings, Housekeeping: struct {
					*ltm.Maintenance
					*ltm.Guilds
				}{s.Maintenance, s.Guilds}},
			chat: chat.Deps{Memories: s.Memories, Duplicates: s.Duplicates, Recall: s.Recall, Transcript: s.Transcripts, Settings: s.Settings},
			db:   &oracle{DB: db},
		}
	case enginePostgres:
		cfg := pgtest.Schema(t)
		s, err := postgres.OpenConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("open PostgreSQL store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		s.Now = now
		db := stdlib.OpenDB(*cfg.ConnConfig.Copy())
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return engineParts{
			bot: bot.Store{Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Facts: s.Facts, Jobs: s.Jobs,
				Transcripts: s.Transcripts, Settings: s.Settings, Confirmations: s.Confirmations,
				Transfer: s.Transfer, Channels: s.Channels, Guilds: s.Guilds,
				Maintenance: s.Health, Now: s.Now, RecoverWindow: s.RecoverWindow},
			pipe: pipeline.Deps{Jobs: s.Jobs, Ledger: s.Jobs, Transcript: s.Transcripts, Facts: s.Facts,
				Candidates: struct {
					*ltm.Recall
					*ltm.Graph
				}{s.Recall, s.Graph}, Settings: s.Settings, Housekeeping: struct {
					*ltm.Maintenance
					*ltm.Guilds
				}{s.Maintenance, s.Guilds}},
			chat: chat.Deps{Memories: s.Memories, Duplicates: s.Duplicates, Recall: s.Recall, Transcript: s.Transcripts, Settings: s.Settings},
			db:   &oracle{DB: db, pg: true},
		}
	}
	t.Fatalf("unknown engine %q", engine)
	return engineParts{}
}

// oracle is the walk's own connection to the store's database. Its queries are written
// once with ? placeholders; on PostgreSQL they are numbered.
type oracle struct {
	*sql.DB
	pg bool
}

func (o *oracle) dialect(query string) string {
	if !o.pg {
		return query
	}
	var sb strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			sb.WriteString("$" + strconv.Itoa(n))
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func (o *oracle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return o.DB.QueryContext(ctx, o.dialect(query), args...)
}

func (o *oracle) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return o.DB.QueryRowContext(ctx, o.dialect(query), args...)
}

func (o *oracle) Query(query string, args ...any) (*sql.Rows, error) {
	return o.DB.Query(o.dialect(query), args...)
}

// contains is the condition that column col holds the next argument's text.
func (o *oracle) contains(col string) string {
	if o.pg {
		return fmt.Sprintf("strpos(%s, ?) > 0", col)
	}
	return fmt.Sprintf("instr(%s, ?) > 0", col)
}

// joined aggregates expr's values into one comma-separated text.
func (o *oracle) joined(expr string) string {
	if o.pg {
		return fmt.Sprintf("string_agg(%s, ',')", expr)
	}
	return fmt.Sprintf("group_concat(%s)", expr)
}

// placeholders is n comma-separated ? marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// pipelineDeps completes the store's part of the pipeline's dependencies as cmd/kioku's
// newPipeline does.
func pipelineDeps(d pipeline.Deps, model pipeline.Model, now func() time.Time) pipeline.Deps {
	d.Model, d.Quote, d.Now = model, contextbuild.Quote, func() time.Time { return now() }
	return d
}

// chatDeps completes the store's part of the chat engine's dependencies.
func chatDeps(d chat.Deps, short chat.ShortTerm, model chat.ChatModel, onTurn chat.TurnHook) chat.Deps {
	d.ShortTerm, d.Model, d.OnTurn = short, model, onTurn
	return d
}
