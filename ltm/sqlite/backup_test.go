package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

func TestBackupWhileWriting(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kioku.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	var (
		mu        sync.Mutex
		committed []int64 // ids whose Remember had returned
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	writes := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(committed)
	}
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
					Content: fmt.Sprintf("writer %d remembers fact number %d", w, i)}, "user:u1")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				committed = append(committed, res.Memory.ID)
				mu.Unlock()
			}
		}()
	}
	// Let the writers get going so the backup really runs among them.
	for deadline := time.Now().Add(10 * time.Second); writes() < 30 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	before := append([]int64(nil), committed...)
	mu.Unlock()
	backup := filepath.Join(t.TempDir(), "backup.db")
	err = s.Maintenance.Backup(ctx, backup)
	afterBackup := writes()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if afterBackup == len(before) {
		t.Log("no write landed during the backup; the snapshot was still taken online")
	}

	raw, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(backup))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	raw.Close()

	b, err := sqlite.Open(ctx, backup)
	if err != nil {
		t.Fatalf("backup does not open as a kioku database: %v", err)
	}
	defer b.Close()
	for _, id := range before {
		if _, err := b.Memories.Get(ctx, memory.ServerOwner("g1"), id); err != nil {
			t.Errorf("memory %d committed before the backup is missing from it: %v", id, err)
		}
	}

	if err := s.Maintenance.Backup(ctx, backup); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("backup over an existing file: err = %v, want a refusal", err)
	}
	if st, err := os.Stat(backup); err != nil || st.Size() == 0 {
		t.Errorf("the refused backup touched the existing file: %v", err)
	}
}

// TestBackupIsNeverReadableByOthers watches the backup's directory while a backup of a
// large database is written under a umask that leaves new files readable by everyone: no
// file that others may read appears there at any moment, and the backup ends up private.
func TestBackupIsNeverReadableByOthers(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.db")
	db, err := sql.Open("sqlite", sqlite.DSN(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE blobs (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if _, err := db.Exec(`INSERT INTO blobs VALUES (randomblob(100000))`); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out := t.TempDir()
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(out, "kioku-backup.db")

	done := make(chan error, 1)
	go func() { done <- sqlite.BackupFile(t.Context(), src, dest) }()
	var exposed []string
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				continue // gone between the listing and the look
			}
			if info.Mode().Perm()&0o077 != 0 {
				exposed = append(exposed, fmt.Sprintf("%s %v", e.Name(), info.Mode()))
			}
		}
	}
	if len(exposed) > 0 {
		slices.Sort(exposed)
		t.Errorf("while the backup was written, others could read: %v", slices.Compact(exposed))
	}
	info, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("the backup's directory holds %d entries, want the backup alone", len(entries))
	}
}
