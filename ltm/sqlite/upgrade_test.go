package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/ltm/storetest"
)

// TestUpgradeFrom901f6da opens, with this binary, a SQLite database that kioku at commit
// 901f6da wrote (loaded from its text dump into a new file): the migrations written since
// apply in place and nothing written then is lost.
func TestUpgradeFrom901f6da(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("testdata", "upgrade", "901f6da.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kioku.db")
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(string(dump)); err != nil {
		raw.Close()
		t.Fatalf("load the 901f6da dump: %v", err)
	}
	raw.Close()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open the 901f6da database: %v", err)
	}
	defer s.Close()
	storetest.CheckUpgraded901f6da(t, storetest.Stores{Memories: s.Memories, Recall: s.Recall, Jobs: s.Jobs,
		Transcripts: s.Transcripts, Settings: s.Settings, Repairs: s.Maintenance})
}
