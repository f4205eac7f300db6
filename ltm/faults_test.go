package ltm_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// Storage faults: the database refuses writes because its disk is full, it is read-only or
// another process holds its write lock. Each write fails with an EUNAVAILABLE error whose
// message names the state and leaks no SQLite text, nothing stored before is harmed, reads
// keep working, and the store writes again once the fault is gone, without reopening.

// faultStore opens a store at a fresh path holding two memories and a transcript turn.
func faultStore(t *testing.T) (*ltm.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	for _, c := range []string{"The raid is on Friday at 20:00", "Kenji runs the guild bank"} {
		if _, err := s.Memories.Remember(ctx, server("g1", c), "user:1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "1",
		AuthorName: "alice", Role: memory.RoleUser, Content: "hello there", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// bigMemory is a memory too large to fit in the pages a database already has: two thousand
// characters of distinct words fill the row, its full-text postings and its history.
func bigMemory(n int) memory.Memory {
	var b strings.Builder
	for i := 0; b.Len() < memory.MaxContentRunes-20; i++ {
		fmt.Fprintf(&b, "w%dx%d ", n, i)
	}
	return server("g1", strings.TrimSpace(b.String()))
}

// wantUnavailable checks that err is EUNAVAILABLE, that its message says text and holds no
// driver or SQL wording, and that the cause is still in the error for the log.
func wantUnavailable(t *testing.T, err error, text, cause string) {
	t.Helper()
	wantCode(t, err, memory.EUNAVAILABLE)
	msg := memory.ErrorMessage(err)
	if !strings.Contains(msg, text) {
		t.Errorf("message = %q, want it to say %q", msg, text)
	}
	for _, leak := range []string{"SQLITE", "sqlite", "(13)", "(8)", "(5)", "couldn't", "INSERT", "\n"} {
		if strings.Contains(msg, leak) {
			t.Errorf("message = %q leaks %q", msg, leak)
		}
	}
	if !strings.Contains(err.Error(), cause) {
		t.Errorf("error = %q, want the cause %q kept for the log", err, cause)
	}
}

// checkIntact opens the file on a connection of its own and checks SQLite's integrity check
// and that the two memories of faultStore are there.
func checkIntact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", res, err)
	}
	for _, c := range []string{"The raid is on Friday at 20:00", "Kenji runs the guild bank"} {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE content = ? AND deleted_at IS NULL`, c).Scan(&n); err != nil || n != 1 {
			t.Errorf("memory %q: %d rows, %v; want 1", c, n, err)
		}
	}
}

// memoryCount counts g1's live memories through the store's read pool.
func memoryCount(t *testing.T, s *ltm.Store) int {
	t.Helper()
	_, n, err := s.Memories.List(ctx, memory.ServerOwner("g1"), memory.ListOptions{})
	if err != nil {
		t.Fatalf("list after the fault: %v", err)
	}
	return n
}

func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	s, path := faultStore(t)
	pages, err := sqlite.WriterPragma(ctx, s, "page_count")
	if err != nil {
		t.Fatal(err)
	}
	if free, _ := sqlite.WriterPragma(ctx, s, "freelist_count"); free != "0" {
		t.Fatalf("%s free pages: the cap below would not make the file full", free)
	}
	// The file may not grow by a page: every write that needs one fails as on a full disk.
	if _, err := sqlite.WriterPragma(ctx, s, "max_page_count = "+pages); err != nil {
		t.Fatal(err)
	}

	_, err = s.Memories.Remember(ctx, bigMemory(1), "user:1")
	wantUnavailable(t, err, "The database is full", "database or disk is full")
	_, err = s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "1", AuthorName: "alice",
		Role: memory.RoleUser, Content: strings.Repeat(bigMemory(2).Content+" ", 3), CreatedAt: time.Now()})
	wantUnavailable(t, err, "The database is full", "database or disk is full")

	if n := memoryCount(t, s); n != 2 {
		t.Errorf("%d memories after the failed write, want the 2 from before", n)
	}
	checkIntact(t, path)
	if got, _ := sqlite.WriterPragma(ctx, s, "page_count"); got != pages {
		t.Errorf("page_count = %s after the failed writes, want %s", got, pages)
	}

	// Space comes back: the next write succeeds on the same store.
	grown, _ := strconv.Atoi(pages)
	if _, err := sqlite.WriterPragma(ctx, s, "max_page_count = "+strconv.Itoa(grown*100)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Memories.Remember(ctx, bigMemory(1), "user:1")
	if err != nil || !res.Created {
		t.Fatalf("write after space returned: %+v, %v", res, err)
	}
	if n := memoryCount(t, s); n != 3 {
		t.Errorf("%d memories after space returned, want 3", n)
	}
	checkIntact(t, path)
}

func TestFaultReadOnly(t *testing.T) {
	t.Parallel()
	s, path := faultStore(t)
	if _, err := sqlite.WriterPragma(ctx, s, "query_only = 1"); err != nil {
		t.Fatal(err)
	}

	_, err := s.Memories.Remember(ctx, server("g1", "Snacks are on Fridays"), "user:1")
	wantUnavailable(t, err, "The database is read-only", "readonly")
	_, err = s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "1", AuthorName: "alice",
		Role: memory.RoleUser, Content: "still there?", CreatedAt: time.Now()})
	wantUnavailable(t, err, "The database is read-only", "readonly")

	// Reads keep working: a list, a search and the recent conversation.
	if n := memoryCount(t, s); n != 2 {
		t.Errorf("%d memories while read-only, want 2", n)
	}
	found, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "raid Friday", Owners: []memory.Owner{memory.ServerOwner("g1")}, Limit: 5})
	if err != nil || len(found) == 0 {
		t.Errorf("search while read-only: %d results, %v", len(found), err)
	}
	turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "1", 10)
	if err != nil || len(turns) != 1 {
		t.Errorf("recent turns while read-only: %d, %v; want 1", len(turns), err)
	}
	checkIntact(t, path)

	if _, err := sqlite.WriterPragma(ctx, s, "query_only = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Remember(ctx, server("g1", "Snacks are on Fridays"), "user:1"); err != nil {
		t.Fatalf("write once writable again: %v", err)
	}
	if n := memoryCount(t, s); n != 3 {
		t.Errorf("%d memories once writable again, want 3", n)
	}
}

func TestFaultLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	s, path := faultStore(t)
	const wait = 150 * time.Millisecond
	if _, err := sqlite.WriterPragma(ctx, s, fmt.Sprintf("busy_timeout = %d", wait.Milliseconds())); err != nil {
		t.Fatal(err)
	}

	// Another program (a second kioku, the sqlite3 shell) holds the write lock with a
	// transaction of its own.
	other, err := sql.Open("sqlite", sqlite.DSN(path)+"&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE memories SET importance = importance WHERE id = 1`); err != nil {
		t.Fatal(err)
	}

	// SQLite's busy handler retries for the busy timeout, then the write gives up with a
	// clear error rather than hanging or half-writing.
	_, err = s.Memories.Remember(ctx, server("g1", "Snacks are on Fridays"), "user:1")
	wantUnavailable(t, err, "The database is busy", "database is locked")
	if n := memoryCount(t, s); n != 2 {
		t.Errorf("%d memories read while another process writes, want 2", n)
	}

	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Remember(ctx, server("g1", "Snacks are on Fridays"), "user:1"); err != nil {
		t.Fatalf("write once the lock was released: %v", err)
	}
	if n := memoryCount(t, s); n != 3 {
		t.Errorf("%d memories once the lock was released, want 3", n)
	}
	checkIntact(t, path)
}
