package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
)

// Fault tests: the real `kioku run` wiring against a database that refuses writes, a
// Discord that rate-limits and drops the gateway, a model that does not answer in time and
// an embedding provider that is down; and a process killed in the middle of a turn. Each
// checks what the member sees, that nothing stored is harmed and that kioku recovers.

// storeFromRun starts the bot with the pipeline off and returns it with the store `kioku
// run` opened, through which a test puts the database in a fault state.
func storeFromRun(t *testing.T, overrides map[string]string) (*e2e, *ltm.Store) {
	t.Helper()
	opened := make(chan *ltm.Store, 1)
	env := map[string]string{"KIOKU_PIPELINE_MODE": "off"}
	for k, v := range overrides {
		env[k] = v
	}
	h := startBotHooked(t, env, func(s *ltm.Store) { opened <- s })
	return h, <-opened
}

// checkIntegrity runs SQLite's integrity check on the file on a connection of its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", ltm.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", res, err)
	}
}

// longText is n characters of distinct words: a row this long does not fit in the free
// room of a page the database already has.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-12; i++ {
		fmt.Fprintf(&b, "word%d ", i)
	}
	return strings.TrimSpace(b.String())
}

// leaks are words of SQLite, Go or kioku's internals that a member must never read.
var leaks = []string{"sqlite", "SQLITE", "(13)", "(8)", "(5)", "couldn't", "goroutine", "panic", "INSERT", "BEGIN", "disk image"}

// TestRunStorageFaults: with the database full, read-only or locked by another process, a
// /memory add and a chat message each get a clear answer naming the state, the model is
// not asked (the message could not be stored first), reads keep working, the operator's log
// has the cause, the file stays intact, and the next write after the fault works without
// a restart.
func TestRunStorageFaults(t *testing.T) {
	t.Parallel()
	h, store := storeFromRun(t, nil)
	admin, alice := h.fake.NewUser("admin"), h.fake.NewUser("alice")
	const aliceDM = "200000000000000301"
	add := func(h *e2e, content string) reply {
		return h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", content)))
	}
	mustContain(t, "first add", add(h, "The raid is on Friday at 20:00").Text(), "Remembered (server) #1")
	h.ai.Script(fakeopenai.Text("Hello!"))
	h.chat(h.fake.DMMessage(aliceDM, alice, "hello"))

	var other *sql.DB // the other process of the Locked case
	var otherTx *sql.Tx
	faults := []struct {
		name        string
		start, stop func(t *testing.T)
		says, cause string
	}{
		{
			name: "DiskFull",
			start: func(t *testing.T) {
				if free, _ := store.WriterPragma(context.Background(), "freelist_count"); free != "0" {
					t.Fatalf("%s free pages: capping the file would not make it full", free)
				}
				pages, err := store.WriterPragma(context.Background(), "page_count")
				if err == nil {
					_, err = store.WriterPragma(context.Background(), "max_page_count = "+pages)
				}
				if err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if _, err := store.WriterPragma(context.Background(), "max_page_count = 1073741823"); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is full", cause: "database or disk is full",
		},
		{
			name: "ReadOnly",
			start: func(t *testing.T) {
				if _, err := store.WriterPragma(context.Background(), "query_only = 1"); err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if _, err := store.WriterPragma(context.Background(), "query_only = 0"); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is read-only", cause: "readonly",
		},
		{
			name: "Locked",
			start: func(t *testing.T) {
				// A short wait keeps the test quick; the default is ltm.DefaultBusyTimeout.
				if _, err := store.WriterPragma(context.Background(), "busy_timeout = 100"); err != nil {
					t.Fatal(err)
				}
				var err error
				if other, err = sql.Open("sqlite", ltm.DSN(h.db)+"&_txlock=immediate"); err != nil {
					t.Fatal(err)
				}
				if otherTx, err = other.Begin(); err != nil {
					t.Fatal(err)
				}
				if _, err := otherTx.Exec(`UPDATE memories SET importance = importance WHERE id = 1`); err != nil {
					t.Fatal(err)
				}
			},
			stop: func(t *testing.T) {
				if err := otherTx.Commit(); err != nil {
					t.Fatal(err)
				}
				other.Close()
				if _, err := store.WriterPragma(context.Background(), fmt.Sprintf("busy_timeout = %d", ltm.DefaultBusyTimeout.Milliseconds())); err != nil {
					t.Fatal(err)
				}
			},
			says: "The database is busy", cause: "database is locked",
		},
	}
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			h := h.in(t)
			f.start(t)
			r := add(h, longText(1990))
			mustContain(t, "add during the fault", r.Text(), f.says, "nothing was saved")
			mustNotContain(t, "add during the fault", r.Text(), leaks...)

			calls := h.ai.ChatCount()
			got := h.chat(h.fake.DMMessage(aliceDM, alice, longText(3990)))
			mustContain(t, "chat during the fault", got.Content, f.says, "nothing was saved")
			mustNotContain(t, "chat during the fault", got.Content, leaks...)
			if n := h.ai.ChatCount() - calls; n != 0 {
				t.Errorf("the model was asked %d times about a message that could not be stored", n)
			}

			list := h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text()
			mustContain(t, "list during the fault", list, "The raid is on Friday", fmt.Sprintf("%d memories", 1+i))
			mustContain(t, "kioku's log", h.stderr.String(), f.cause)

			f.stop(t)
			checkIntegrity(t, h.db)
			mustContain(t, "add after the fault", add(h, fmt.Sprintf("Fault %s is over", f.name)).Text(), "Remembered (server)")
			h.ai.Script(fakeopenai.Text("Welcome back."))
			if got := h.chat(h.fake.DMMessage(aliceDM, alice, "are you there?")); got.Content != "Welcome back." {
				t.Errorf("chat after the fault = %q", got.Content)
			}
		})
	}
}
