package postgres_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/storetest"
)

// TestPostgresStore runs the store contract on PostgreSQL, one fresh schema per case.
func TestPostgresStore(t *testing.T) {
	pgtest.URL(t) // one skip line for the whole suite without a database
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		cfg := pgtest.Schema(t)
		readOnly := pgtest.ReadOnlySwitch(cfg)
		s := pgtest.OpenConfig(t, cfg)
		clock := storetest.NewClock(storetest.Epoch)
		s.Now = clock.Now
		// Every memory gets a vector whose bytes spell its words, so forget-me's byte scan
		// covers the embeddings table too.
		s.Recall.SetEmbedder(spellingEmbed, "spelling")
		return storetest.Stores{
			Memories: s.Memories, Review: s.Review, Duplicates: s.Duplicates, Recall: s.Recall, Jobs: s.Jobs, Transcripts: s.Transcripts, Settings: s.Settings,
			Confirmations: s.Confirmations, ForgetMe: s.Confirmations, Graph: s.Graph,
			Stages: &s.Stages,
			Facts:  s.Facts, Channels: s.Channels, Guilds: s.Guilds, Budgets: s.Budgets, Counts: s.Health, Sessions: s.Sessions,
			Contributions: s.Overview,
			Keywords:      s.Recall,
			Raw:           tableDump{s: s, dir: t.TempDir()},
			Repairs:       s.Maintenance,
			Exec: func(ctx context.Context, stmt string) error {
				_, err := s.Pool().Exec(ctx, stmt)
				return err
			},
			Writes:        s,
			Embedder:      s.Recall,
			ReadOnly:      func(_ context.Context, on bool) error { readOnly(on); return nil },
			Clock:         clock,
			RecoverWindow: s.RecoverWindow,
			ConfirmTTL:    s.ConfirmTTL,
		}
	})
}

// tableDump hands the suite's byte scan of forget-me a dump of every table of the store's
// schema, each row as COPY writes it (generated word vectors included, and bytea in the
// escape format, so the bytes of stored embeddings appear as they are): the member's words
// must be in no row of any table. PostgreSQL's own files may keep deleted row versions until
// VACUUM (docs/postgres.md); what the scan proves is that no table holds them.
type tableDump struct {
	s   *postgres.Store
	dir string
}

func (d tableDump) DataFiles(ctx context.Context) ([]string, error) {
	conn, err := d.s.Pool().Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET bytea_output = 'escape'`); err != nil {
		return nil, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET bytea_output`) //nolint:errcheck // a pooled setting only this dump reads
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

// spellingDims is the width of spellingEmbed's vectors: 512 bytes of text.
const spellingDims = 128

// spellingEmbed embeds a text as its own UTF-8 bytes read as little-endian float32s (zero
// padded to spellingDims): a stored vector's bytes spell the text, so a byte scan finds in
// the embeddings table every word a vector was made from. Text never spells a NaN or an
// infinity: that takes a 0x7f or 0xff byte, which UTF-8 text without control characters
// does not hold.
func spellingEmbed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		b := make([]byte, 4*spellingDims)
		copy(b, text)
		v := make([]float32, spellingDims)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		out[i] = v
	}
	return out, nil
}
