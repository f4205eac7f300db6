package main

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// countMemories opens a backup file on its own and counts its server memories of guild g1.
func countMemories(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM memories WHERE guild_id = 'g1'`).Scan(&n); err != nil {
		t.Fatalf("%s is not a readable kioku database: %v", path, err)
	}
	return n
}

// TestDailyBackup: with KEEP=2, backups on three different days leave the two newest, each
// a whole database named by its UTC time; a second look the same day writes nothing; files
// the job did not name are never touched; a failed backup leaves no file behind, deletes
// no old backup and is recorded for doctor and /kioku status.
func TestDailyBackup(t *testing.T) {
	ctx := t.Context()
	store := testkit.MustOpenStore(t)
	clock := testkit.NewClock(time.Date(2026, 11, 24, 3, 15, 0, 0, time.UTC))
	store.Now = clock.Now
	dir := t.TempDir()
	foreign := []string{"kioku-notes.txt", "kioku-2026.db", "kioku.db", "other-20261101T000000Z.db"}
	for _, name := range foreign {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not ours"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	job := &backupJob{dir: dir, keep: 2, now: store.Now, backup: store.Maintenance.Backup, record: store.Jobs.RecordRun,
		log: slog.New(slog.DiscardHandler)}

	var written []string
	for day := range 3 {
		testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "fact of day " + string(rune('A'+day))})
		path, err := job.runIfDue(ctx)
		if err != nil || path == "" {
			t.Fatalf("day %d: backup %q, %v; want one written", day+1, path, err)
		}
		if n := countMemories(t, path); n != day+1 {
			t.Fatalf("day %d: the backup holds %d memories, want %d", day+1, n, day+1)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("day %d: backup mode %v (%v), want 0600: it holds what members said", day+1, info.Mode(), err)
		}
		written = append(written, filepath.Base(path))
		clock.Advance(time.Hour)
		if again, err := job.runIfDue(ctx); err != nil || again != "" {
			t.Fatalf("day %d: a second look an hour later wrote %q (%v); want nothing", day+1, again, err)
		}
		clock.Advance(backupEvery - time.Hour)
	}
	if written[0] != "kioku-20261124T031500Z.db" || written[2] != "kioku-20261126T031500Z.db" {
		t.Fatalf("backups named %v, want kioku-<UTC time>.db", written)
	}
	want := append(slices.Clone(foreign), written[1:]...)
	slices.Sort(want)
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("backup directory holds %v, want the two newest backups and the files that are not backups: %v", got, want)
	}

	// A failure after the copy was written (a full disk, a failed sync): nothing changes.
	job.backup = func(ctx context.Context, path string) error {
		if err := store.Maintenance.Backup(ctx, path); err != nil {
			return err
		}
		return errors.New("no space left on device")
	}
	before := dirNames(t, dir)
	if path, err := job.runIfDue(ctx); err == nil || path != "" {
		t.Fatalf("failing backup: %q, %v; want an error and no file", path, err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, before) {
		t.Fatalf("after a failed backup the directory holds %v, want it unchanged: %v", got, before)
	}
	runs, err := store.Jobs.TaskRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(runs, func(r memory.TaskRun) bool { return r.Name == backupTask })
	if i < 0 || runs[i].OK || !strings.Contains(runs[i].Error, "no space left") || runs[i].Runs != 4 || runs[i].Failures != 1 {
		t.Fatalf("task runs %+v, want 4 backup runs recorded, the last one failed with its cause", runs)
	}
}

// TestDailyBackupRemovesOnlyStaleTemps: a temporary file left by a backup killed a day ago
// is removed; one of a backup that may still be running is not.
func TestDailyBackupRemovesOnlyStaleTemps(t *testing.T) {
	store := testkit.MustOpenStore(t)
	now := time.Date(2026, 11, 24, 3, 15, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }
	dir := t.TempDir()
	stale, recent := "kioku-20261122T031500Z.db.tmp", "kioku-20261124T030000Z.db.tmp"
	for _, name := range []string{stale, recent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("half a backup"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	job := &backupJob{dir: dir, keep: 3, now: store.Now, backup: store.Maintenance.Backup, log: slog.New(slog.DiscardHandler)}
	if _, err := job.run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), []string{recent, "kioku-20261124T031500Z.db"}; !slices.Equal(got, want) {
		t.Fatalf("directory holds %v, want %v", got, want)
	}
}

// TestRunTakesDailyBackup: `kioku run` with KIOKU_BACKUP_DIR set writes a backup at start
// (none exists yet) into the directory it creates.
func TestRunTakesDailyBackup(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "backups")
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_BACKUP_DIR": dir})
	waitFor(t, h, "the first daily backup", func() bool {
		names, _ := filepath.Glob(filepath.Join(dir, "kioku-*Z.db"))
		return len(names) == 1
	})
}

// TestBackupSettings: KIOKU_BACKUP_KEEP must be a positive number; the directory is off by
// default.
func TestBackupSettings(t *testing.T) {
	cfg, err := LoadConfig(only("KIOKU_DB", "k.db"))
	if err != nil || cfg.BackupDir != "" || cfg.BackupKeep != 3 {
		t.Fatalf("defaults: dir %q keep %d (%v), want off and 3", cfg.BackupDir, cfg.BackupKeep, err)
	}
	if _, err := LoadConfig(only("KIOKU_BACKUP_KEEP", "0")); err == nil || !strings.Contains(err.Error(), "KIOKU_BACKUP_KEEP") {
		t.Fatalf("KIOKU_BACKUP_KEEP=0: %v, want an error naming the setting", err)
	}
}

// oldDatabase writes a kioku database at path migrated only up to (not including) the
// migration named before, the way an older kioku left it.
func oldDatabase(t *testing.T, path, before string) {
	t.Helper()
	old := fstest.MapFS{}
	names, err := fs.Glob(sqlite.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name < before {
			body, err := fs.ReadFile(sqlite.Migrations(), name)
			if err != nil {
				t.Fatal(err)
			}
			old[name] = &fstest.MapFile{Data: body}
		}
	}
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlite.Migrate(context.Background(), db, old); err != nil {
		t.Fatal(err)
	}
}

func appliedMigrations(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMigrateBacksUpFirst: `kioku migrate` on a database with pending migrations copies it
// beside itself first, as DB.pre-MIGRATION-TIME.bak, and says so; the copy is the
// database as it was. Nothing is written when no migration is pending, for a new
// database, or with --no-backup.
func TestMigrateBacksUpFirst(t *testing.T) {
	t.Run("Pending", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "kioku.db")
		oldDatabase(t, db, "0006")
		env := map[string]string{"KIOKU_DB": db}
		code, out, errOut := runApp(t, env, "", "migrate")
		if code != 0 {
			t.Fatalf("migrate: exit %d, %s", code, errOut)
		}
		baks, _ := filepath.Glob(db + ".pre-0006_*-*Z.bak")
		if len(baks) != 1 || !strings.Contains(out, "backed up "+db+" to "+baks[0]+" before migrating") {
			t.Fatalf("backups %v, stdout %q; want one named for the first pending migration, and said", baks, out)
		}
		if n := appliedMigrations(t, baks[0]); n != 5 {
			t.Fatalf("the backup records %d migrations, want the 5 the database had before", n)
		}
		if !strings.Contains(out, "applied 0006") {
			t.Fatalf("stdout %q, want the pending migrations applied after the backup", out)
		}

		before := dirNames(t, dir)
		code, out, _ = runApp(t, env, "", "migrate")
		if code != 0 || strings.Contains(out, "backed up") || !slices.Equal(dirNames(t, dir), before) {
			t.Fatalf("migrate with nothing pending: exit %d, stdout %q, files %v; want no backup", code, out, dirNames(t, dir))
		}
	})
	t.Run("NoBackupFlag", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "kioku.db")
		oldDatabase(t, db, "0006")
		code, out, errOut := runApp(t, map[string]string{"KIOKU_DB": db}, "", "migrate", "--no-backup")
		if code != 0 || strings.Contains(out, "backed up") || !strings.Contains(out, "applied 0006") {
			t.Fatalf("migrate --no-backup: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		if baks, _ := filepath.Glob(filepath.Join(dir, "*.bak")); len(baks) != 0 {
			t.Fatalf("--no-backup wrote %v", baks)
		}
	})
	t.Run("NewDatabase", func(t *testing.T) {
		dir := t.TempDir()
		code, out, _ := runApp(t, map[string]string{"KIOKU_DB": filepath.Join(dir, "kioku.db")}, "", "migrate")
		if code != 0 || strings.Contains(out, "backed up") {
			t.Fatalf("migrate of a new database: exit %d, stdout %q; want no backup", code, out)
		}
		if baks, _ := filepath.Glob(filepath.Join(dir, "*.bak")); len(baks) != 0 {
			t.Fatalf("a new database was backed up: %v", baks)
		}
	})
}
