package postgres_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/storetest"
)

// TestPostgresUpgradeFrom901f6da opens, with this binary, a PostgreSQL schema that kioku at
// commit 901f6da wrote (loaded from its pg_dump into a fresh schema): the migrations written
// since apply in place and nothing written then is lost.
func TestPostgresUpgradeFrom901f6da(t *testing.T) {
	cfg := pgtest.Schema(t)
	dump, err := os.ReadFile(filepath.Join("testdata", "upgrade", "901f6da.sql"))
	if err != nil {
		t.Fatal(err)
	}
	schema := strings.Split(cfg.ConnConfig.RuntimeParams["search_path"], ",")[0]
	conn, err := pgx.ConnectConfig(t.Context(), cfg.ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), strings.ReplaceAll(string(dump), "kioku_901f6da", schema))
	conn.Close(t.Context())
	if err != nil {
		t.Fatalf("load the 901f6da dump: %v", err)
	}
	s := pgtest.OpenConfig(t, cfg)
	storetest.CheckUpgraded901f6da(t, storetest.Stores{Memories: s.Memories, Recall: s.Recall, Jobs: s.Jobs,
		Transcripts: s.Transcripts, Settings: s.Settings, Repairs: s.Maintenance})
}
