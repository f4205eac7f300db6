package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kioku-bot/kioku/ltm/storetest"
	"github.com/kioku-bot/kioku/pgstore"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
)

// TestPostgresStore runs the store contract on PostgreSQL, one fresh schema per case.
func TestPostgresStore(t *testing.T) {
	pgtest.URL(t) // one skip line for the whole suite without a database
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := pgtest.Open(t)
		clock := storetest.NewClock(storetest.Epoch)
		s.Now = clock.Now
		return storetest.Stores{
			Memories: s.Memories, Recall: s.Recall, Jobs: s.Jobs, Transcripts: s.Transcripts, Settings: s.Settings,
			Confirmations: s.Confirmations, ForgetMe: s.Confirmations, Graph: s.Graph,
			Facts: s.Facts, Channels: s.Channels, Guilds: s.Guilds, Budgets: s.Budgets,
			Raw:           tableDump{s: s, dir: t.TempDir()},
			Clock:         clock,
			RecoverWindow: s.RecoverWindow,
			ConfirmTTL:    s.ConfirmTTL,
		}
	})
}

// tableDump hands the suite's byte scan of forget-me a dump of every table of the store's
// schema, each row as COPY writes it (generated word vectors included): the member's words
// must be in no row of any table. PostgreSQL's own files may keep deleted row versions until
// VACUUM (docs/postgres.md); what the scan proves is that no table holds them.
type tableDump struct {
	s   *pgstore.Store
	dir string
}

func (d tableDump) DataFiles(ctx context.Context) ([]string, error) {
	conn, err := d.s.Pool().Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("no tables in the store's schema")
	}
	var files []string
	for _, table := range tables {
		path := filepath.Join(d.dir, table+".copy")
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		_, err = conn.Conn().PgConn().CopyTo(ctx, f, `COPY `+pgx.Identifier{table}.Sanitize()+` TO STDOUT`)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't dump %s: %w", table, err)
		}
		files = append(files, path)
	}
	return files, nil
}
