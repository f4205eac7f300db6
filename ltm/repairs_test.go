package ltm

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestRunRepairs seeds a database the way older versions wrote it (credentials stored in
// memories, history, transcripts and job payloads; finished jobs with their content), then
// repairs it: interrupted after one batch, resumed from the saved cursor, and run again to
// show a finished repair does nothing.
func TestRunRepairs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kioku.db")
	s, err := OpenTestStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const key = "sk-proj-QUOKKAsecret0123456789abcdef"
	secretParts := []string{"QUOKKAsecret0123456789", "quokkasecret0123456789"}
	var ids []int64
	exec := func(query string, args ...any) {
		t.Helper()
		if err := s.withWriteTx(ctx, func(tx *txn) error {
			_, err := tx.ExecContext(ctx, query, args...)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	oldMemory := func(content string, deleted bool) int64 {
		t.Helper()
		var id int64
		err := s.withWriteTx(ctx, func(tx *txn) error {
			var del any
			if deleted {
				del = s.nowMillis()
			}
			return tx.QueryRowContext(ctx, `INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized,
				content_hash, source, created_at, updated_at, deleted_at) VALUES ('server', 'g:1', '1', 'fact', ?, ?, ?, 'tool', 1, 1, ?)
				RETURNING id`, content, memory.Normalize(content), memory.Hash(content), del).Scan(&id)
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		return id
	}
	// Older versions wrote without secure_delete, so deleted rows stayed in freed pages.
	if _, err := s.write.ExecContext(ctx, `PRAGMA secure_delete = off`); err != nil {
		t.Fatal(err)
	}
	const purgedKey = "ghp_PURGEDtokenABCDEFGHIJKLMNOPQRSTUVWXYZ0123"
	secretParts = append(secretParts, "PURGEDtokenABCDEFGHIJ", "purgedtokenabcdefghij")
	purged := oldMemory("Purged long ago: "+purgedKey, false)
	ids = ids[:0]
	dupOf := oldMemory("The deploy key is [redacted OpenAI key]", false)
	dup := oldMemory("The deploy key is "+key, false)
	for _, c := range []string{"First note uses " + key, "Second note uses " + key, "Third note uses " + key} {
		oldMemory(c, false)
	}
	tomb := oldMemory("Forgotten note with "+key, true)
	exec(`INSERT INTO memory_history (memory_id, scope_key, action, old_content, new_content, actor, created_at)
		VALUES (?, 'g:1', 'update', ?, 'nothing secret', 'user:1', 1)`, dup, "old text "+key)
	exec(`INSERT INTO transcripts (channel_id, user_id, role, content, created_at) VALUES ('c1', '1', 'user', ?, 1)`,
		"here is my key "+key)
	payload := `{"guild_id":"1","channel_id":"c1","checkpoint":{"facts":["the key is ` + key + `"]}}`
	exec(`INSERT INTO memory_jobs (kind, dedup_key, payload, state, run_after, created_at, updated_at)
		VALUES ('extract', '1/c1', ?, 'queued', 1, 1, 1)`, payload)
	exec(`INSERT INTO memory_jobs (kind, dedup_key, payload, state, run_after, created_at, updated_at)
		VALUES ('extract', '1/c2', ?, 'done', 1, 1, 1)`, strings.ReplaceAll(payload, key, "a fact about Alice"))
	exec(`INSERT INTO memory_jobs (kind, dedup_key, payload, state, last_error, run_after, created_at, updated_at)
		VALUES ('extract', '1/c3', ?, 'dead', ?, 1, 1, 1)`, payload, "bad job payload: "+payload)
	exec(`DELETE FROM memories WHERE id = ?`, purged)
	// A long turn retention deleted: its overflow pages went to the free list as they were.
	exec(`INSERT INTO transcripts (id, channel_id, user_id, role, content, created_at) VALUES (999, 'c1', '2', 'user', ?, 1)`,
		strings.Repeat("an old long message with "+purgedKey+" in it. ", 400))
	exec(`DELETE FROM transcripts WHERE id = 999`)
	if _, err := s.write.ExecContext(ctx, `PRAGMA secure_delete = on`); err != nil {
		t.Fatal(err)
	}
	// Precondition: the deleted key is still readable in the file, as older versions left it.
	if !bytes.Contains(fileBytes(t, s, path), []byte(secretParts[2])) {
		t.Fatal("the seeded database does not hold the deleted key, so the test proves nothing")
	}

	t.Run("InterruptedAfterOneBatch", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		var at int64
		_, err := s.Maintenance.runRepairs(ctx, repairConfig{batch: 2, afterBatch: func(_ string, cursor int64) {
			at = cursor
			cancel()
		}})
		if err == nil {
			t.Fatal("an interrupted repair reported no error")
		}
		var saved int64
		var done sql.NullInt64
		if err := s.read.QueryRowContext(t.Context(), `SELECT cursor, done_at FROM store_repairs WHERE name = ?`, repairRedact).
			Scan(&saved, &done); err != nil {
			t.Fatal(err)
		}
		if saved != ids[1] || at != saved || done.Valid {
			t.Fatalf("cursor after one batch of 2 memories: saved %d (hook saw %d, done %v), want %d", saved, at, done.Valid, ids[1])
		}
	})
	t.Run("ResumesFromItsCursor", func(t *testing.T) {
		var first int64 = -1
		rep, err := s.Maintenance.runRepairs(ctx, repairConfig{batch: 2, afterBatch: func(name string, cursor int64) {
			if first < 0 && name == repairRedact {
				first = cursor
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if first != ids[3] {
			t.Errorf("the resumed repair's first batch ended at %d, want %d (the batch after the saved cursor)", first, ids[3])
		}
		if rep.Memories != 4 || rep.History != 1 || rep.Transcripts != 1 || rep.Jobs != 2 || rep.Stripped != 2 || !rep.Vacuumed ||
			len(rep.Finished) != 3 {
			t.Errorf("report %+v", rep)
		}
	})
	t.Run("Repaired", func(t *testing.T) {
		rows, err := s.read.QueryContext(ctx, `SELECT id, content, deleted_at IS NOT NULL FROM memories`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id      int64
				content string
				deleted bool
			)
			if err := rows.Scan(&id, &content, &deleted); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(content, "sk-proj") {
				t.Errorf("memory %d still holds the key: %q", id, content)
			}
			if wantDeleted := id == dup || id == tomb; deleted != wantDeleted {
				t.Errorf("memory %d deleted=%v, want %v", id, deleted, wantDeleted)
			}
		}
		hist, err := s.Memories.History(ctx, memory.ServerOwner("1"), dup)
		if err != nil {
			t.Fatal(err)
		}
		last := hist[len(hist)-1]
		if last.Action != memory.ActionDelete || !strings.Contains(last.Reason, "#") || last.OldContent != "" {
			t.Errorf("history of the memory that became a duplicate of #%d: %+v", dupOf, last)
		}
		jobs, err := s.Jobs.ListJobs(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			var p map[string]any
			if err := json.Unmarshal(j.Payload, &p); err != nil {
				t.Errorf("job %d payload is no longer JSON: %s", j.ID, j.Payload)
			}
			_, hasCheckpoint := p["checkpoint"]
			if hasCheckpoint != (j.State == memory.JobQueued) || strings.Contains(string(j.Payload), "sk-proj") ||
				strings.Contains(string(j.Payload), "Alice") || strings.Contains(j.LastError, "{") {
				t.Errorf("job %d (%s): payload %s, error %q", j.ID, j.State, j.Payload, j.LastError)
			}
		}
		found, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "QUOKKAsecret0123456789abcdef", Owners: []memory.Owner{memory.ServerOwner("1")}})
		if err != nil || len(found) != 0 {
			t.Errorf("search for the key found %d memories (%v)", len(found), err)
		}
		b := fileBytes(t, s, path)
		for _, part := range secretParts {
			if bytes.Contains(b, []byte(part)) {
				t.Errorf("the database files still hold %q", part)
			}
		}
	})
	t.Run("SecondRunDoesNothing", func(t *testing.T) {
		rep, err := s.Maintenance.RunRepairs(ctx)
		if err != nil || !rep.Empty() {
			t.Fatalf("second run: %+v %v", rep, err)
		}
	})
}

// fileBytes checkpoints the WAL and returns the bytes of every database file.
func fileBytes(t *testing.T, s *Store, path string) []byte {
	t.Helper()
	if _, err := s.write.ExecContext(t.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}
