package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// backupStamp is the UTC timestamp in backup file names (kioku-20261124T031500Z.db, and
// the copy `kioku migrate` makes first): it sorts in time order and says when at a glance.
const backupStamp = "20060102T150405Z"

const (
	// backupEvery is how often the daily backup job writes a backup.
	backupEvery = 24 * time.Hour
	// backupCheckEvery is how often it looks whether one is due. The newest backup file is
	// its only state, so a bot restarted every few hours still backs up once a day.
	backupCheckEvery = time.Hour
	// backupTask names the job in the ledger of task runs (doctor, /kioku status).
	backupTask = "backup"
)

var (
	// backupName matches the files the job writes, and is the only pattern it ever deletes.
	backupName = regexp.MustCompile(`^kioku-(\d{8}T\d{6}Z)\.db$`)
	// backupTempName matches a backup still being written; it is renamed when complete.
	backupTempName = regexp.MustCompile(`^kioku-(\d{8}T\d{6}Z)\.db\.tmp$`)
)

// backupJob writes a VACUUM INTO backup of the database to dir once a day, named by its UTC
// time, and keeps the newest keep of them.
type backupJob struct {
	dir  string
	keep int
	now  func() time.Time
	// backup writes a complete snapshot of the database to a new file at path (the store's
	// Maintenance.Backup).
	backup func(ctx context.Context, path string) error
	// record, when set, stores each backup's outcome as a task run, so doctor and
	// /kioku status show when the last one was taken or why it failed.
	record func(ctx context.Context, r memory.TaskRun) error
	log    *slog.Logger
}

// newBackupJob returns the daily backup job of `kioku run` for store, or nil when
// KIOKU_BACKUP_DIR is empty. It creates the directory, private to kioku's user, so a
// directory that cannot be used stops kioku at start rather than a day later.
func (app *App) newBackupJob(store *backend) (*backupJob, error) {
	cfg := app.config
	if cfg.BackupDir == "" {
		return nil, nil
	}
	sqlite, err := store.sqliteOnly("KIOKU_BACKUP_DIR", "unset it and back up PostgreSQL with pg_dump or its own tools")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.BackupDir, 0o700); err != nil {
		return nil, fmt.Errorf("invalid KIOKU_BACKUP_DIR: %w", err)
	}
	return &backupJob{
		dir:    cfg.BackupDir,
		keep:   cfg.BackupKeep,
		now:    func() time.Time { return store.Now() },
		backup: sqlite.Maintenance.Backup,
		record: store.Jobs.RecordRun,
		log:    app.logger.With("component", "backup"),
	}, nil
}

// schedule takes a backup now if one is due, then looks again every backupCheckEvery
// until ctx ends. A backup cut short by the shutdown leaves no file behind.
func (j *backupJob) schedule(ctx context.Context) {
	check := func() { _, _ = j.runIfDue(ctx) }
	check()
	c := pipeline.NewCron(j.log)
	if _, err := c.AddFunc("@every 1h", check); err != nil {
		j.log.Error("couldn't schedule the daily backup", "err", err)
		return
	}
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
}

// backupFile is one backup the job wrote.
type backupFile struct {
	name string
	at   time.Time
}

// list returns the backups in dir (files named like the job names them, nothing else),
// oldest first.
func (j *backupJob) list() ([]backupFile, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("couldn't list backups in %s: %w", j.dir, err)
	}
	var out []backupFile
	for _, e := range entries {
		m := backupName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		at, err := time.Parse(backupStamp, m[1])
		if err != nil {
			continue // not a time: not a name the job wrote
		}
		out = append(out, backupFile{name: e.Name(), at: at})
	}
	slices.SortFunc(out, func(a, b backupFile) int { return a.at.Compare(b.at) })
	return out, nil
}

// runIfDue takes a backup when the newest one is about a day old or there is none. It
// returns the new backup's path, or "" when none was due.
func (j *backupJob) runIfDue(ctx context.Context) (string, error) {
	backups, err := j.list()
	if err != nil {
		j.log.Error("couldn't check whether a backup is due", "err", err)
		return "", err
	}
	// Checks an hour apart would otherwise land just short of a full day and slip an
	// hour every day.
	if n := len(backups); n > 0 && j.now().Sub(backups[n-1].at) < backupEvery-backupCheckEvery {
		return "", nil
	}
	return j.run(ctx)
}

// run takes one backup now, then deletes all but the newest keep backups. The backup is
// written under a temporary name and renamed only once complete and synced, so a file
// named like a backup is always a whole one; a failure removes the temporary file and
// deletes no old backup.
func (j *backupJob) run(ctx context.Context) (path string, err error) {
	start := j.now()
	clock := time.Now()
	run := memory.TaskRun{Name: backupTask, StartedAt: start}
	defer func() {
		run.FinishedAt, run.OK = j.now(), err == nil
		switch {
		case err != nil && path == "":
			run.Error = err.Error()
			j.log.Error("backup failed; older backups are kept", "err", err, "took", time.Since(clock))
		case err != nil:
			run.Error = err.Error()
			j.log.Error("backup written, but older backups could not all be removed", "path", path, "err", err)
		}
		if j.record != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if rerr := j.record(rctx, run); rerr != nil {
				j.log.Warn("couldn't record the backup run", "err", rerr)
			}
		}
	}()
	name := "kioku-" + start.UTC().Format(backupStamp) + ".db"
	path = filepath.Join(j.dir, name)
	tmp := path + ".tmp"
	j.removeStaleTemps(start)
	if err := j.backup(ctx, tmp); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if _, err := os.Lstat(path); err == nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("couldn't back up to %s: the file already exists", path)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("couldn't complete the backup %s: %w", path, err)
	}
	_ = syncFile(j.dir) // the rename survives a power cut; a failure here loses nothing already written
	removed, err := j.prune()
	run.Detail = fmt.Sprintf("file=%s removed=%d", name, removed)
	if err != nil {
		return path, err
	}
	info, _ := os.Stat(path)
	var size int64
	if info != nil {
		size = info.Size()
	}
	j.log.Info("backup written", "path", path, "bytes", size, "removed", removed, "took", time.Since(clock))
	return path, nil
}

// prune deletes all but the newest keep backups and returns how many it deleted.
func (j *backupJob) prune() (int, error) {
	backups, err := j.list()
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, b := range backups[:max(0, len(backups)-j.keep)] {
		if err := os.Remove(filepath.Join(j.dir, b.name)); err != nil {
			return removed, fmt.Errorf("couldn't remove old backup: %w", err)
		}
		removed++
	}
	return removed, nil
}

// removeStaleTemps deletes temporary files of backups that began more than a day before
// now: a process killed while writing leaves one behind, and it is never a whole backup.
// Younger ones may belong to a backup still being written by another kioku.
func (j *backupJob) removeStaleTemps(now time.Time) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := backupTempName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		if at, err := time.Parse(backupStamp, m[1]); err == nil && now.Sub(at) > backupEvery {
			if err := os.Remove(filepath.Join(j.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				j.log.Warn("couldn't remove an unfinished backup", "file", e.Name(), "err", err)
			}
		}
	}
}

// syncFile flushes path (a file or a directory) to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("couldn't sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("couldn't sync %s: %w", path, err)
	}
	return nil
}
