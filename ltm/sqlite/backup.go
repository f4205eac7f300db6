package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Backup writes a consistent snapshot of the database to path with SQLite's VACUUM INTO,
// while the bot keeps running (ltm.Maintenance.Backup): BackupFile on the store's file.
func (u upkeep) Backup(ctx context.Context, path string) error {
	return BackupFile(ctx, u.path, path)
}

// BackupFile writes a consistent snapshot of the database at dbPath to path with VACUUM
// INTO. VACUUM INTO reads inside one read transaction, which in WAL mode sees one committed
// state for its whole length, so the copy holds exactly the writes that had committed when
// it began. It runs on a connection of its own: a store's reader pool is query_only, which
// SQLite applies to VACUUM INTO as well, and its single writer would hold every write back
// for as long as the copy takes. An existing path is refused rather than overwritten, so a
// backup can never clobber another one (or the database). It needs no open store: `kioku
// migrate` copies the database it is about to migrate without applying anything first,
// which Open would.
func BackupFile(ctx context.Context, dbPath, path string) error {
	if path == "" {
		return errors.New("couldn't back up: empty path")
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("couldn't back up to %s: the file already exists; choose a new path", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("couldn't back up to %s: %w", path, err)
	}
	// A backup holds everything members said and were remembered by: readable by kioku's
	// user only, whatever the umask, at every moment. VACUUM INTO creates its file with the
	// process umask, so it writes inside a directory of its own that only kioku's user may
	// enter, and the finished, private file is then linked into place.
	private, err := os.MkdirTemp(filepath.Dir(path), ".kioku-backup-*")
	if err != nil {
		return fmt.Errorf("couldn't back up to %s: %w", path, err)
	}
	defer os.RemoveAll(private)
	staged := filepath.Join(private, "backup.db")
	conn, err := sql.Open("sqlite", DSN(dbPath))
	if err != nil {
		return fmt.Errorf("couldn't open %s for a backup: %w", dbPath, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, staged); err != nil {
		// A half-written file is not a backup; it would only mislead a later restore. It
		// goes with the private directory.
		return fmt.Errorf("couldn't back up to %s: %w", path, err)
	}
	if err := os.Chmod(staged, 0o600); err != nil {
		return fmt.Errorf("couldn't make the backup %s private: %w", path, err)
	}
	// A link never replaces a file that appeared at path meanwhile.
	if err := os.Link(staged, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("couldn't back up to %s: the file already exists; choose a new path", path)
		}
		return fmt.Errorf("couldn't back up to %s: %w", path, err)
	}
	return nil
}
