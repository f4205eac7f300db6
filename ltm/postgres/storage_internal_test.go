package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kioku-bot/kioku/memory"
)

// TestStorageErrorStates: the database states that refuse a write for a reason outside the
// request become EUNAVAILABLE with their message; retries of a busy moment (serialization
// failure, deadlock), a protocol violation (a bug), a wrong password and request errors
// stay what they are. The read-only state itself is proven on a real server by the
// contract suite's RefusedWritesUnavailable.
func TestStorageErrorStates(t *testing.T) {
	for _, c := range []struct {
		code, want string
	}{
		{"53100", fullText}, {"53200", overloadedText}, {"53300", overloadedText}, {"53400", overloadedText},
		{"25006", readOnlyText},
		{"57P01", unreachableText}, {"57P02", unreachableText}, {"57P03", unreachableText},
		{"08000", unreachableText}, {"08003", unreachableText}, {"08006", unreachableText},
		{"08P01", ""}, {"40001", ""}, {"40P01", ""}, {"23505", ""}, {"42601", ""}, {"57014", ""}, {"28P01", ""},
	} {
		cause := fmt.Errorf("couldn't insert memory: %w", &pgconn.PgError{Code: c.code, Message: "server words"})
		checkStorageError(t, c.code, cause, c.want)
	}

	// No server listens on port 1: the connection attempt itself fails.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, "postgres://kioku@127.0.0.1:1/kioku?sslmode=disable&connect_timeout=2")
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected to port 1")
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); !ok {
		t.Fatalf("connection refused gave %T %v, want a *pgconn.ConnectError", err, err)
	}
	checkStorageError(t, "refused connection", fmt.Errorf("couldn't begin write: %w", err), unreachableText)

	domain := &memory.Error{Code: memory.ECONFLICT, Message: "changed since"}
	if got := storageError(domain); got != domain {
		t.Errorf("a domain error became %v", got)
	}
	if storageError(nil) != nil {
		t.Error("storageError(nil) is not nil")
	}
}

func checkStorageError(t *testing.T, name string, cause error, want string) {
	t.Helper()
	err := storageError(cause)
	if want == "" {
		if err != cause {
			t.Errorf("%s: became %v, want it unchanged", name, err)
		}
		return
	}
	if memory.ErrorCode(err) != memory.EUNAVAILABLE || memory.ErrorMessage(err) != want {
		t.Errorf("%s: code %q message %q, want %q %q", name, memory.ErrorCode(err), memory.ErrorMessage(err), memory.EUNAVAILABLE, want)
	}
	if !errors.Is(err, cause) {
		t.Errorf("%s: the cause is lost for the log: %v", name, err)
	}
}
