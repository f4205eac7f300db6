package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresMigrations: Open applies the embedded series once (a second Open changes
// nothing), and a database migrated further than the binary knows, or whose applied file
// changed, is refused with a message that says what to do, before anything is applied.
func TestPostgresMigrations(t *testing.T) {
	cfg := pgtest.Schema(t)
	ctx := t.Context()
	for range 2 {
		s, err := postgres.OpenConfig(ctx, cfg.Copy())
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		s.Close()
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	files := migrationNames(t)
	var applied int
	if err := p.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil || applied != len(files) {
		t.Fatalf("schema_migrations holds %d rows (%v) after two opens, want one per file (%d)", applied, err, len(files))
	}

	t.Run("ErrNewerSchema", func(t *testing.T) {
		// What a newer kioku leaves behind: a migration this binary has no file for.
		if _, err := p.Exec(ctx, `INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('9999_future.sql', 'x', 0)`); err != nil {
			t.Fatal(err)
		}
		_, err := postgres.OpenConfig(ctx, cfg.Copy())
		if err == nil || !strings.Contains(err.Error(), "migrated by a newer kioku") || !strings.Contains(err.Error(), "9999_future.sql") {
			t.Fatalf("open of a newer schema: %v, want a refusal naming 9999_future.sql", err)
		}
		if _, err := p.Exec(ctx, `DELETE FROM schema_migrations WHERE name = '9999_future.sql'`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrOtherFileUnderAnAppliedName", func(t *testing.T) {
		// The real series with 0001 replaced, so the changed file is the only difference.
		files := fstest.MapFS{}
		for _, name := range migrationNames(t) {
			data, err := os.ReadFile(filepath.Join("migrations", name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = &fstest.MapFile{Data: data}
		}
		files["0001_schema.sql"] = &fstest.MapFile{Data: []byte("-- the real file's checksum differs")}
		if _, err := postgres.Migrate(ctx, p, files); err == nil || !strings.Contains(err.Error(), "was changed after it was applied") {
			t.Fatalf("migrate with a different 0001: %v, want a refusal", err)
		}
	})
	t.Run("ErrChangedFile", func(t *testing.T) {
		if _, err := p.Exec(ctx, `UPDATE schema_migrations SET checksum = 'edited' WHERE name = '0001_schema.sql'`); err != nil {
			t.Fatal(err)
		}
		_, err := postgres.OpenConfig(ctx, cfg.Copy())
		if err == nil || !strings.Contains(err.Error(), "was changed after it was applied") {
			t.Fatalf("open with a changed migration: %v, want a refusal", err)
		}
	})
	t.Run("ErrBadURL", func(t *testing.T) {
		if _, err := postgres.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"); err == nil {
			t.Fatal("open of an unreachable database succeeded")
		}
	})
}

// migrationNames are the files of the embedded series, by name.
func migrationNames(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("migration files: %v %v", paths, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

// migratedBefore opens a pool on a fresh schema migrated up to, not including, the
// migration whose name starts with first, the way a database an older kioku wrote is; all
// holds every migration, for the upgrade, and cfg opens the schema.
func migratedBefore(t *testing.T, first string) (*pgxpool.Config, *pgxpool.Pool, fstest.MapFS) {
	t.Helper()
	cfg := pgtest.Schema(t)
	p, err := pgxpool.NewWithConfig(t.Context(), cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	before, all := fstest.MapFS{}, fstest.MapFS{}
	for _, name := range migrationNames(t) {
		data, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		all[name] = &fstest.MapFile{Data: data}
		if name < first {
			before[name] = &fstest.MapFile{Data: data}
		}
	}
	if _, err := postgres.Migrate(t.Context(), p, before); err != nil {
		t.Fatal(err)
	}
	return cfg, p, all
}

// TestPostgresGuildRolesUpgrade: 0007 adds the stored roles beside a database's stored
// channels, which it keeps as they were; no guild has roles until its next GUILD_CREATE.
func TestPostgresGuildRolesUpgrade(t *testing.T) {
	ctx := t.Context()
	cfg, p, all := migratedBefore(t, "0007")
	if _, err := p.Exec(ctx, `INSERT INTO guild_channels (guild_id, channel_id, overwrites, updated_at)
		VALUES ('1', '10', '[{"id":"1","type":0,"allow":0,"deny":1024}]', 5)`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Migrate(ctx, p, all); err != nil {
		t.Fatal(err)
	}
	var overwrites string
	if err := p.QueryRow(ctx, `SELECT overwrites FROM guild_channels WHERE guild_id = '1' AND channel_id = '10'`).Scan(&overwrites); err != nil ||
		overwrites != `[{"id":"1","type":0,"allow":0,"deny":1024}]` {
		t.Errorf("stored channel after the upgrade: %q %v", overwrites, err)
	}
	var n int
	if err := p.QueryRow(ctx, `SELECT count(*) FROM guild_roles`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("roles after the upgrade: %d %v, want none", n, err)
	}
	s, err := postgres.OpenConfig(ctx, cfg.Copy())
	if err != nil {
		t.Fatalf("open after the upgrade: %v", err)
	}
	defer s.Close()
	if err := s.Channels.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: "1", OwnerID: "9", Roles: map[string]int64{"1": 1024}}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Channels.GuildRoles(ctx, "1"); err != nil || !ok || got.OwnerID != "9" || got.Roles["1"] != 1024 {
		t.Errorf("roles saved on the upgraded schema: %+v %v %v", got, ok, err)
	}
}
