package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// What a member or an operator reads when the database refuses a write for a reason outside
// the request. They name the state, say that nothing changed and what helps, and carry no
// SQLite text: the cause goes to the log with the error.
const (
	fullText     = "The database is full (its disk has no space left), so nothing was saved or changed. Please try again later; the bot's operator has to free some space."
	readOnlyText = "The database is read-only right now, so nothing was saved or changed. Please try again later; the bot's operator has to make it writable again."
	busyText     = "The database is busy with another program's write, so nothing was saved or changed. Please try again in a moment."
)

// storageError turns a write that failed because of the database's state into an
// EUNAVAILABLE domain error wrapping err: a full disk (SQLITE_FULL), a read-only file or
// connection (SQLITE_READONLY) or another process holding the write lock past the busy
// timeout (SQLITE_BUSY). Domain errors and every other failure are returned unchanged.
func storageError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*memory.Error](err); ok {
		return err
	}
	e, ok := errors.AsType[*sqlite.Error](err)
	if !ok {
		return err
	}
	// Extended result codes (SQLITE_READONLY_DBMOVED, SQLITE_BUSY_SNAPSHOT, ...) keep the
	// primary code in their low byte.
	var text string
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		text = fullText
	case sqlite3.SQLITE_READONLY:
		text = readOnlyText
	case sqlite3.SQLITE_BUSY:
		text = busyText
	default:
		return err
	}
	return &memory.Error{Code: memory.EUNAVAILABLE, Message: text, Err: err}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (or one of its extended codes).
func isBusy(err error) bool {
	e, ok := errors.AsType[*sqlite.Error](err)
	return ok && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// WriterPragma runs "PRAGMA pragma" on the writer connection of s, a store Open opened,
// between writes, and returns the first value it reports ("" when it reports none). The
// setting lasts as long as the connection, which the store keeps open. It is the seam
// through which tests put the database in the states it meets in production:
// "max_page_count = N" caps the file as a full disk does, "query_only = 1" refuses writes as
// a read-only file does, and "busy_timeout = MS" shortens the wait for another process's
// write lock.
func WriterPragma(ctx context.Context, s *ltm.Store, pragma string) (string, error) {
	e, ok := s.Engine().(*engine)
	if !ok {
		return "", fmt.Errorf("couldn't run pragma %q: the store is not SQLite's", pragma)
	}
	pragma = strings.TrimSpace(pragma)
	if pragma == "" || strings.ContainsAny(pragma, ";") {
		return "", fmt.Errorf("couldn't run pragma %q: want one pragma", pragma)
	}
	rows, err := e.write.QueryContext(ctx, "PRAGMA "+pragma)
	if err != nil {
		return "", fmt.Errorf("couldn't run pragma %q: %w", pragma, err)
	}
	defer rows.Close()
	var v string
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return "", fmt.Errorf("couldn't read pragma %q: %w", pragma, err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("couldn't run pragma %q: %w", pragma, err)
	}
	return v, nil
}
