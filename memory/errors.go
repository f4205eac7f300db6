package memory

import (
	"errors"
	"fmt"
	"strconv"
)

// Error codes. The edge (Discord reply, CLI) shows Message for domain errors and a generic
// "internal error" plus a log line for everything else.
const (
	EINVALID    = "invalid"     // bad input: empty, too long, unknown type, secret
	ENOTFOUND   = "not_found"   // no such memory in the caller's scope
	ECONFLICT   = "conflict"    // if_version did not match, or a duplicate
	EFORBIDDEN  = "forbidden"   // the caller may not do this here
	ENOTDELETED = "not_deleted" // recover of a memory that is not deleted
	EEXPIRED    = "expired"     // recover after the retention window, or a stale confirm token
	ELIMIT      = "limit"       // a cap on what a scope may hold or a file may carry was reached
	EINTERNAL   = "internal"    // anything else
)

// EUNAVAILABLE is the code of a write the database refused for a reason outside the request:
// its disk is full, it is read-only, another process holds its lock. Nothing was changed and
// the same request may work later; the cause is in Err, for the operator's log.
const EUNAVAILABLE = "unavailable"

// Error is a domain error with a code and a message written for the person who caused it.
type Error struct {
	Code    string
	Message string
	// Err is the failure behind the error, when there is one: logged, never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the failure behind the error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a domain error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a domain error anywhere in err's chain, EINTERNAL for other
// errors and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of a domain error, or a generic message for
// anything else (whose details belong in logs, not in front of users).
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Message
	}
	return "Something went wrong on my side; the details are in the bot's logs."
}

// Thousands writes n with thousands separators, as people read limits ("200,000").
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
