package sqlite_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestSecretRulesColumn: 0023 records that an existing database's redaction repair ran
// with the first credential rules, keeping where it stood, so a binary with newer rules
// re-scans it (ltm.RunRepairs) and one with the same rules does not.
func TestSecretRulesColumn(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0023")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE store_repairs SET cursor = 42, done_at = 7 WHERE name = 'redact-secrets'`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var (
		cursor, rules int64
		done          sql.NullInt64
	)
	if err := db.QueryRow(`SELECT cursor, done_at, rules FROM store_repairs WHERE name = 'redact-secrets'`).
		Scan(&cursor, &done, &rules); err != nil {
		t.Fatal(err)
	}
	if cursor != 42 || done.Int64 != 7 || rules != 1 {
		t.Fatalf("after 0023: cursor %d, done_at %v, rules %d; want 42, 7 and the first rules (1)", cursor, done, rules)
	}
}
