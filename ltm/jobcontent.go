package ltm

import (
	"context"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// A job's payload may hold people's words: the pipeline checkpoints extracted facts and
// decisions in it. A finished job keeps ids and outcome, not content (SPEC §2), so when a
// job completes, is buried or dies its payload shrinks to the ids below, and its error text
// never quotes the payload.

// The SQL of a payload reduced to its ids is the engine's (Dialect.JobIDsPayload).

// clearCheckpointsTx drops the checkpoint of every unfinished job and takes back every
// lease, so the words of someone who was just forgotten (or who just switched privacy) are
// neither kept in a queued job nor written back by a running worker's next heartbeat or
// postpone: the worker gets ErrLeaseLost and drops its work, and the job runs again from
// the transcript, without counting an attempt. It returns how many jobs changed.
func (s *db) clearCheckpointsTx(ctx context.Context, tx *txn) (int, error) {
	now := s.nowMillis()
	n, err := execCount(ctx, tx, `UPDATE memory_jobs SET
		payload = CASE WHEN `+s.dialect.JobHasCheckpoint+` THEN `+s.dialect.JobWithoutCheckpoint+` ELSE payload END,
		state = 'queued', lease_owner = '', leased_until = 0,
		run_after = CASE WHEN state = 'leased' THEN ? ELSE run_after END, updated_at = ?
		WHERE state = 'leased' OR (state = 'queued' AND `+s.dialect.JobHasCheckpoint+`)`, now, now)
	if err != nil {
		return 0, fmt.Errorf("couldn't clear job checkpoints: %w", err)
	}
	return n, nil
}

// stripFinishedJobsTx reduces the payload of every finished job that still holds more
// than its ids (written by older versions) and returns how many changed.
func (s *db) stripFinishedJobsTx(ctx context.Context, tx *txn) (int, error) {
	n, err := execCount(ctx, tx, `UPDATE memory_jobs SET payload = `+s.dialect.JobIDsPayload+`
		WHERE state IN ('done', 'dead') AND payload <> `+s.dialect.JobIDsPayload)
	if err != nil {
		return 0, fmt.Errorf("couldn't strip finished jobs: %w", err)
	}
	return n, nil
}

// jobErrorText is the error stored with a failed job: the kind of problem, never the
// payload. Where the message quotes the payload (a worker reporting a bad payload) or any
// JSON, it is cut there, and credentials are redacted.
func jobErrorText(err error, payload string) string {
	if err == nil {
		return ""
	}
	return cleanJobError(err.Error(), payload)
}

func cleanJobError(msg, payload string) string {
	if p := strings.TrimSpace(payload); p != "" && p != "{}" {
		if i := strings.Index(msg, p); i >= 0 {
			msg = msg[:i]
		}
	}
	if i := strings.IndexByte(msg, '{'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimRight(strings.TrimSpace(msg), ":")
	msg = memory.RedactSecrets(msg)
	if len(msg) > 500 {
		msg = strings.ToValidUTF8(msg[:500], "")
	}
	if msg == "" {
		msg = "job failed"
	}
	return msg
}
