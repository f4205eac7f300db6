//go:build soak

package main

import (
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// soakDB is the database under test seen through database/sql, for the run's checks: the
// same tables on both engines, placeholders written as ? and numbered for PostgreSQL.
type soakDB struct {
	t        *testing.T
	db       *sql.DB
	postgres bool
	// bytes is the database's size on disk.
	bytes func() int64
}

// rebind numbers the ? placeholders of query for PostgreSQL.
func (d *soakDB) rebind(query string) string {
	if !d.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// count runs a query that counts, failing the test on an error: from the test's goroutine.
func (d *soakDB) count(query string, args ...any) int {
	d.t.Helper()
	n, err := d.tryCount(query, args...)
	if err != nil {
		d.t.Fatal(err)
	}
	return n
}

// tryCount is count for other goroutines, which must not stop the test.
func (d *soakDB) tryCount(query string, args ...any) (int, error) {
	var n int
	if err := d.db.QueryRow(d.rebind(query), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return n, nil
}

// each runs query and calls fn with each row's scan.
func (d *soakDB) each(query string, fn func(scan func(...any) error) error, args ...any) {
	d.t.Helper()
	rows, err := d.db.Query(d.rebind(query), args...)
	if err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			d.t.Fatalf("%s: %v", query, err)
		}
	}
	if err := rows.Err(); err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
}

// liveMemories counts the live memories.
func (d *soakDB) liveMemories() int {
	return d.count(`SELECT COUNT(*) FROM memories WHERE deleted_at IS NULL`)
}

// drain waits until no pipeline job is due or running, so measurements and checks see a
// settled pipeline. Jobs waiting for a later batch (idle conversations) or a retry stay
// queued, and the leases of killed processes wait until they expire.
func (s *soak) drain(e *soakEngine) {
	s.t.Helper()
	deadline := time.Now().Add(soakDrainWait)
	for {
		clause, args := "", []any{}
		if e.deadOwners != nil {
			for _, o := range e.deadOwners() {
				clause += ` AND lease_owner NOT LIKE ?`
				args = append(args, o+"%")
			}
		}
		busy := e.db.count(`SELECT COUNT(*) FROM memory_jobs WHERE (state = 'leased'`+clause+`)
			OR (state = 'queued' AND run_after <= ?)`, append(args, time.Now().UnixMilli())...)
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.fail(fmt.Sprintf("pipeline still had %d jobs due after %v", busy, soakDrainWait))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// soakRows are the database's soak memories and turns, by conversation and turn.
type soakRows struct {
	live, stored map[[2]int]int // memories of the turn's fact: live ones, and all (forgotten ones included)
	turns        map[[2]int]int // the member's transcript turns holding the turn's token
	committed    map[[2]int]bool
	proposals    map[[2]int]int // the pipeline's proposals of the turn's fact
	quoted       map[[2]int]int // transcript turns of anyone, the bot's included, quoting the token
}

// tokenKey is the conversation and turn a "C-K" token names.
func tokenKey(token string) [2]int {
	c, k := splitToken(token)
	return [2]int{c, k}
}

// readRows reads what the checks compare with the run's record.
func (s *soak) readRows(d *soakDB) soakRows {
	rows := soakRows{live: map[[2]int]int{}, stored: map[[2]int]int{}, turns: map[[2]int]int{},
		committed: map[[2]int]bool{}, proposals: map[[2]int]int{}, quoted: map[[2]int]int{}}
	var content string
	var live int
	d.each(`SELECT content, CASE WHEN deleted_at IS NULL THEN 1 ELSE 0 END FROM memories WHERE content LIKE 'Soak member %'`,
		func(scan func(...any) error) error {
			if err := scan(&content, &live); err != nil {
				return err
			}
			if m := soakToken.FindStringSubmatch(content); m != nil {
				rows.stored[tokenKey(m[1])]++
				rows.live[tokenKey(m[1])] += live
			}
			return nil
		})
	var role string
	var done int
	d.each(`SELECT t.content, t.role, CASE WHEN c.last_turn_id IS NOT NULL AND t.id <= c.last_turn_id THEN 1 ELSE 0 END
		FROM transcripts t LEFT JOIN pipeline_cursors c ON c.guild_id = t.guild_id AND c.channel_id = t.channel_id`,
		func(scan func(...any) error) error {
			if err := scan(&content, &role, &done); err != nil {
				return err
			}
			for _, m := range soakTokens.FindAllStringSubmatch(content, -1) {
				c, _ := strconv.Atoi(m[1])
				k, _ := strconv.Atoi(m[2])
				key := [2]int{c, k}
				rows.quoted[key]++
				if role == "user" {
					rows.turns[key]++
					rows.committed[key] = rows.committed[key] || done == 1
				}
			}
			return nil
		})
	var n int
	d.each(`SELECT new_content, COUNT(*) FROM memory_history WHERE actor = 'pipeline'
		AND action IN ('create', 'deduped', 'skipped', 'blocked', 'shadow') AND new_content LIKE 'Soak member %'
		GROUP BY new_content`, func(scan func(...any) error) error {
		if err := scan(&content, &n); err != nil {
			return err
		}
		if m := soakToken.FindStringSubmatch(content); m != nil {
			rows.proposals[tokenKey(m[1])] += n
		}
		return nil
	})
	return rows
}

// checkDatabase fills in the database's part of the report and returns what is wrong in
// it, turn by turn against what the run did: a memory the model was told was saved is
// stored once; a fact the pipeline extracted from a turn it moved past is stored; nothing
// of a forgotten member and nothing learned only from a deleted message is left; no job's
// work was committed twice; no job died and no lease was left behind.
func (s *soak) checkDatabase(e *soakEngine, r *soakReport) map[string]int {
	d := e.db
	errs := map[string]int{}
	r.DBBytes = d.bytes()
	d.each(`SELECT COUNT(*) FROM memories WHERE deleted_at IS NULL GROUP BY scope_key, content_hash HAVING COUNT(*) > 1`,
		func(scan func(...any) error) error {
			var n int
			err := scan(&n)
			r.DuplicateMemories += n - 1
			return err
		})
	if err := d.db.QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE source = 'tool'), COUNT(*) FILTER (WHERE source = 'pipeline')
		FROM memories WHERE deleted_at IS NULL`).Scan(&r.Memories, &r.MemoriesTool, &r.MemoriesPipeline); err != nil {
		s.t.Fatal(err)
	}
	if r.Memories > 0 {
		r.DBBytesPerMemory = math.Round(float64(r.DBBytes) / float64(r.Memories))
	}
	if dead := d.count(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'dead'`); dead > 0 {
		errs["dead pipeline jobs"] = dead
	}
	now := time.Now().UnixMilli()
	if n := d.count(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'leased' AND leased_until < ?`, now-2*time.Minute.Milliseconds()); n > 0 {
		errs["jobs whose lease expired over two minutes ago and were never reaped"] = n
	}
	r.JobsWaiting = d.count(`SELECT COUNT(*) FROM memory_jobs WHERE state = 'queued' AND attempts > 0 AND run_after > ?`, now)

	rows := s.readRows(d)
	for _, c := range s.convs {
		c.mu.Lock()
		n := len(c.turns)
		c.mu.Unlock()
		for k := range n {
			s.checkTurn(c, k, rows, errs, r)
		}
	}
	return errs
}

// checkTurn compares turn k of c with the database.
func (s *soak) checkTurn(c *soakConv, k int, rows soakRows, errs map[string]int, r *soakReport) {
	key, t := [2]int{c.id, k}, c.turn(k)
	deleted := t.flags&turnDeleted != 0 && t.flags&turnDeleteAtRisk == 0
	r.Checked.Proposals += rows.proposals[key]
	if rows.proposals[key] > int(t.attempts) {
		r.JobsRunTwice++
	}
	switch {
	case c.forgottenEver(k):
		r.Checked.Forgotten++
		if rows.stored[key] > 0 {
			errs["a forgotten member's memory is still stored"]++
		}
		if rows.quoted[key] > 0 {
			errs["a forgotten member's words are still in the transcript"]++
		}
	case t.flags&turnToolSaved != 0:
		r.Checked.Saved++
		if rows.live[key] != 1 {
			errs[fmt.Sprintf("a memory the model was told was saved is stored %d times, not once", rows.live[key])]++
		}
	case deleted:
		r.Checked.Deleted++
		if rows.turns[key] > 0 {
			errs["a deleted message is still in the transcript"]++
		}
		if rows.live[key] > 0 {
			errs["a memory learned only from a deleted message is still live"]++
		}
	case t.flags&turnExtracted != 0 && rows.committed[key]:
		r.Checked.Extracted++
		if rows.live[key] == 0 {
			errs["a fact the pipeline extracted from a turn it moved past is not stored"]++
		}
	}
}
