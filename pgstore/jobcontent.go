package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// What is left here of the job payload rules (ltm/jobcontent.go) serves the aggregates
// still written for PostgreSQL alone.

// clearCheckpointsTx drops the checkpoint of every unfinished job and takes back every
// lease, so the words of someone who was just forgotten (or who just switched privacy) are
// neither kept in a queued job nor written back by a running worker's next heartbeat or
// postpone: the worker gets ErrLeaseLost and drops its work, and the job runs again from
// the transcript, without counting an attempt. It returns how many jobs changed. It goes
// when forget-me folds into the service.
func (s *db) clearCheckpointsTx(ctx context.Context, tx *txn) (int, error) {
	now := s.nowMillis()
	n, err := execCount(ctx, tx, `UPDATE memory_jobs SET
		payload = CASE WHEN `+jobHasCheckpoint+` THEN (payload::jsonb - 'checkpoint')::text ELSE payload END,
		state = 'queued', lease_owner = '', leased_until = 0,
		run_after = CASE WHEN state = 'leased' THEN ? ELSE run_after END, updated_at = ?
		WHERE state = 'leased' OR (state = 'queued' AND `+jobHasCheckpoint+`)`, now, now)
	if err != nil {
		return 0, fmt.Errorf("couldn't clear job checkpoints: %w", err)
	}
	return n, nil
}

// cleanJobError is a failed job's error as stored, without the payload it may quote (see
// ltm's jobErrorText); it goes when self-repair folds into the service.
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
