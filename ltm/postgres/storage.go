package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kioku-bot/kioku/memory"
)

// What a member or an operator reads when PostgreSQL refuses a write for a reason outside
// the request, in ltm's words where the state is the same (storage.go there). They name the
// state, say that nothing changed and what helps, and carry no PostgreSQL text: the cause
// goes to the log with the error.
const (
	fullText        = "The database is full (its disk has no space left), so nothing was saved or changed. Please try again later; the bot's operator has to free some space."
	readOnlyText    = "The database is read-only right now, so nothing was saved or changed. Please try again later; the bot's operator has to make it writable again."
	overloadedText  = "The database is out of resources (connections or memory) right now, so nothing was saved or changed. Please try again in a moment."
	unreachableText = "The database can't be reached right now (it may be restarting), so nothing was saved or changed. Please try again in a moment."
)

// storageError turns a write that failed because of the database's state into an
// EUNAVAILABLE domain error wrapping err, as ltm's storageError does for SQLite. Domain
// errors and every other failure are returned unchanged: a constraint, a syntax error, a
// cancelled context, and the serialization failures and deadlocks (40001, 40P01), which
// are retries of a busy moment rather than a state the operator has to change.
//
// Every case is an error the server (or the connection attempt) reported before anything
// was committed, so "nothing was saved" holds. A connection lost without a reply, which
// could hide a commit that happened, is left as it is.
func storageError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*memory.Error](err); ok {
		return err
	}
	text := unavailableText(err)
	if text == "" {
		return err
	}
	return &memory.Error{Code: memory.EUNAVAILABLE, Message: text, Err: err}
}

// unavailableText is the message for err's database state, or "" when err is not one.
func unavailableText(err error) string {
	if pg, ok := errors.AsType[*pgconn.PgError](err); ok {
		return stateText(pg.Code)
	}
	// No server answered the connection attempt: it is down, or not listening yet.
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return unreachableText
	}
	return ""
}

// stateText maps a SQLSTATE to its message: disk full, a read-only transaction (the
// database or the role set read-only, or a standby), insufficient resources (class 53),
// an administrator's shutdown or a server not accepting connections yet (57P01-57P03),
// and a connection exception (class 08, except 08P01, a protocol violation: a bug).
func stateText(code string) string {
	switch {
	case code == "53100":
		return fullText
	case code == "25006":
		return readOnlyText
	case strings.HasPrefix(code, "53"):
		return overloadedText
	case code == "57P01", code == "57P02", code == "57P03":
		return unreachableText
	case strings.HasPrefix(code, "08") && code != "08P01":
		return unreachableText
	}
	return ""
}
