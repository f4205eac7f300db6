package ltm

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/kioku-bot/kioku/memory"
)

// Hydration. A recall ranks about a hundred candidates and returns ten, so candidates are
// read with the columns the ranking needs (candidateColumns) and only the results are
// read whole (complete). Both read rows by primary key, the ids passed as one JSON array:
// the statement text then depends on the scope and filters alone, so it is prepared once
// per connection and kept (stmtCache); Dialect.ByKey says how the engine reads rows by key.

// candidateColumns are the memory columns ranking reads (recall.Candidate with the span its
// words name, the effective importance, the scope key and the content hash for exact
// cosines); scanCandidate reads them in this order.
const candidateColumns = `m.id, m.scope, m.guild_id, m.user_id, m.type, m.content, m.content_hash, m.importance, m.pinned,
	m.author_name, m.channel_id, m.created_at, m.accessed_at, m.access_count, m.subject_id, m.refers_to, m.refers_to_end,
	m.state, m.state_ref`

func scanCandidate(row scanner) (*memory.Memory, error) {
	var (
		m                     memory.Memory
		pinned                int
		created, accessed     int64
		refersTo, refersToEnd sql.NullInt64
	)
	if err := row.Scan(&m.ID, &m.Scope, &m.GuildID, &m.UserID, &m.Type, &m.Content, &m.Hash, &m.Importance, &pinned,
		&m.Provenance.Author, &m.Provenance.ChannelID, &created, &accessed, &m.AccessCount, &m.SubjectID,
		&refersTo, &refersToEnd, &m.State, &m.StateRef); err != nil {
		return nil, err
	}
	m.Pinned = pinned != 0
	m.CreatedAt, m.AccessedAt = fromMillis(created), fromMillis(accessed)
	m.RefersTo, m.RefersToEnd = spanOf(refersTo, refersToEnd)
	return &m, nil
}

// idArray renders ids as the JSON array Dialect.JSONArrayTexts reads.
func idArray(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// loadCandidates reads, for ranking, the live memories among ids inside where (scope,
// filters and audience), in id order.
func (s searcher) loadCandidates(ctx context.Context, ids []int64, where string, args []any) ([]*memory.Memory, error) {
	qargs := make([]any, 0, 1+len(args))
	qargs = append(qargs, idArray(ids))
	qargs = append(qargs, args...)
	cols, scan := candidateColumns, scanCandidate
	if s.db.dialect.WholeCandidates {
		cols, scan = prefixed("m.", memoryColumns), scanMemory
	}
	rows, err := s.db.recall.stmts.query(ctx, s.db.read, `SELECT `+cols+` FROM `+s.db.dialect.ByKey+`
		WHERE `+s.db.dialect.IDsIn("m.id")+` AND m.deleted_at IS NULL AND `+where, qargs...)
	if err != nil {
		return nil, fmt.Errorf("couldn't load recalled memories: %w", err)
	}
	defer rows.Close()
	out := make([]*memory.Memory, 0, len(ids))
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read memory row: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't load recalled memories: %w", err)
	}
	slices.SortFunc(out, func(a, b *memory.Memory) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// completeSQL reads whole memory rows by primary key (complete).
func completeSQL(d *Dialect) string {
	return `SELECT ` + prefixed("m.", memoryColumns) + ` FROM ` + d.ByKey + `
	WHERE ` + d.IDsIn("m.id") + ` AND m.deleted_at IS NULL`
}

// complete replaces the ranked results' memories, read for ranking only, by their whole
// rows. A result whose memory was forgotten since it was ranked is left out. Candidates
// read whole (Dialect.WholeCandidates) are complete already.
func (s searcher) complete(ctx context.Context, out []memory.SearchResult) ([]memory.SearchResult, error) {
	if len(out) == 0 || s.db.dialect.WholeCandidates {
		return out, nil
	}
	ids := make([]int64, len(out))
	for i, r := range out {
		ids[i] = r.Memory.ID
	}
	rows, err := s.db.recall.stmts.query(ctx, s.db.read, completeSQL(s.db.dialect), idArray(ids))
	if err != nil {
		return nil, fmt.Errorf("couldn't load recalled memories: %w", err)
	}
	mems, err := collectMemories(rows)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*memory.Memory, len(mems))
	for _, m := range mems {
		byID[m.ID] = m
	}
	kept := out[:0]
	for _, r := range out {
		if m := byID[r.Memory.ID]; m != nil {
			r.Memory = m
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// stmtCacheMax bounds the prepared statements kept: one per shape of scope and filters
// seen, and recall's shapes are few.
const stmtCacheMax = 64

// stmtCache keeps recall's prepared statements by their text.
type stmtCache struct {
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// query runs text with args through a statement prepared once, or directly once the cache
// is full; directly too on an engine whose driver keeps its own (Dialect.DriverPrepares).
func (c *stmtCache) query(ctx context.Context, db *pool, text string, args ...any) (*sql.Rows, error) {
	if db.eng.Dialect().DriverPrepares {
		return db.QueryContext(ctx, text, args...)
	}
	c.mu.Lock()
	st := c.stmts[text]
	if st == nil && !c.closed && len(c.stmts) < stmtCacheMax {
		var err error
		if st, err = db.PrepareContext(ctx, text); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if c.stmts == nil {
			c.stmts = map[string]*sql.Stmt{}
		}
		c.stmts[text] = st
	}
	c.mu.Unlock()
	if st == nil {
		return db.QueryContext(ctx, text, args...)
	}
	return st.QueryContext(ctx, args...)
}

// close closes the kept statements; later queries run unprepared.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}
