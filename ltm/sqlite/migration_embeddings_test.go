package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestEmbeddingsRowidUpgrade: 0015 moves stored vectors to a rowid table without losing or
// changing one, and a content hash still holds one vector per model (upserts keep working).
func TestEmbeddingsRowidUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0015")); err != nil {
		t.Fatal(err)
	}
	vec := strings.Repeat("\x01\x02\x03\x04", 384)
	for _, q := range []string{
		`INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES ('h1', 'm', 384, CAST(? AS BLOB), 1)`,
		`INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES ('h1', 'other', 384, CAST(? AS BLOB), 2)`,
		`INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES ('h2', 'm', 384, CAST(? AS BLOB), 3)`,
	} {
		if _, err := db.Exec(q, vec); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var withoutRowid int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'embeddings' AND sql LIKE '%WITHOUT ROWID%'`).Scan(&withoutRowid); err != nil || withoutRowid != 0 {
		t.Fatalf("embeddings is still a WITHOUT ROWID table (%v)", err)
	}
	var n, sameVectors int
	if err := db.QueryRow(`SELECT count(*), sum(vector = CAST(? AS BLOB)) FROM embeddings`, vec).Scan(&n, &sameVectors); err != nil {
		t.Fatal(err)
	}
	if n != 3 || sameVectors != 3 {
		t.Fatalf("after the upgrade: %d vectors, %d unchanged; want 3 and 3", n, sameVectors)
	}
	// The store's upsert: one row per hash and model, the new vector replacing the old.
	if _, err := db.Exec(`INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES ('h1', 'm', 2, x'0000', 9)
		ON CONFLICT (content_hash, model) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, created_at = excluded.created_at`); err != nil {
		t.Fatal(err)
	}
	var dims, rows int
	if err := db.QueryRow(`SELECT count(*), max(dims) FROM embeddings WHERE content_hash = 'h1' AND model = 'm'`).Scan(&rows, &dims); err != nil || rows != 1 || dims != 2 {
		t.Fatalf("upsert after the upgrade: %d rows with dims %d (%v), want 1 row with dims 2", rows, dims, err)
	}
	if _, err := db.Exec(`INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES ('h2', 'm', 1, x'00', 1)`); err == nil {
		t.Fatal("a second vector of the same hash and model was stored")
	}
	var plan string
	if err := db.QueryRow(`EXPLAIN QUERY PLAN SELECT vector FROM embeddings WHERE content_hash = 'h2' AND model = 'm'`).Scan(new(int), new(int), new(int), &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "embeddings_keys") {
		t.Fatalf("a vector lookup by hash and model plans as %q, want it to use embeddings_keys", plan)
	}
}
