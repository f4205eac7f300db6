package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/internal/vecindex"
	"github.com/kioku-bot/kioku/memory"
)

// The keyword leg is served from an in-memory BM25 index per scope key (internal/kwindex),
// with the scope's own term statistics and kioku's BM25 parameters. SQLite stays the
// durable source: a scope's index is built from its rows on first use and kept current
// from the memory_changes log (migration 0012), which triggers fill on every write by any
// process, so the CLI or an import writing to the same file is seen by the next query.
// Until a scope's index is ready (a large scope builds in the background), the keyword leg
// answers from the FTS5 index, as it always did.

const (
	// DefaultKeywordSyncBuild is the largest scope whose keyword index is built inside the
	// first query that needs it, which then costs about what a full-text query does (a
	// build takes 10–30 µs a memory); larger scopes build in the background while FTS5
	// answers, so a cold server's first answer is never slower than before.
	DefaultKeywordSyncBuild = 256
	// DefaultKeywordIndexMax bounds the memories held by all keyword indexes of a process;
	// past it the least recently searched scopes are dropped and rebuilt on their next use.
	// At about 140 bytes a memory (15 words; docs/recall.md), 1.5 million take about
	// 210 MB: a deployment of 1.1M memories stays resident.
	DefaultKeywordIndexMax = 1_500_000
	// changeLogKeep is how many change rows retention leaves (the newest); a process that
	// falls further behind rebuilds its indexes.
	changeLogKeep = 200_000
)

// keywordIndexes are the in-memory keyword indexes of one store.
type keywordIndexes struct {
	// catchUp serialises reading the change log; applied is the last sequence number
	// applied to every ready scope.
	catchUp sync.Mutex
	applied atomic.Int64

	mu     sync.Mutex
	scopes map[string]*keywordScope
	clock  atomic.Int64 // use counter for least-recently-used eviction
	wg     sync.WaitGroup
	closed bool
}

type keywordScope struct {
	idx      *kwindex.Scope
	ready    atomic.Bool
	building atomic.Bool
	lastUsed atomic.Int64
}

func (k *keywordIndexes) init() {
	k.scopes = map[string]*keywordScope{}
}

// close waits for background builds to stop.
func (k *keywordIndexes) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.wg.Wait()
}

// keywordColumns are the memory columns an index document is made of.
const keywordColumns = `id, scope_key, deleted_at IS NULL, content, author_name, guild_id, channel_id, created_at, type, pinned,
	importance, tags, author_id, normalized`

// scanKeywordDoc reads one row of keywordColumns.
func scanKeywordDoc(row scanner) (doc kwindex.Doc, scopeKey string, live bool, err error) {
	var m memory.Memory
	var pinned int
	var tags string
	var created int64
	if err := row.Scan(&m.ID, &scopeKey, &live, &m.Content, &m.Provenance.Author, &m.GuildID, &m.Provenance.ChannelID,
		&created, &m.Type, &pinned, &m.Importance, &tags, &m.Provenance.AuthorID, &m.Normalized); err != nil {
		return doc, "", false, err
	}
	m.Pinned = pinned != 0
	m.CreatedAt = fromMillis(created)
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return doc, "", false, fmt.Errorf("couldn't decode tags of memory %d: %w", m.ID, err)
		}
	}
	// The bigram text is what the SQL scan reads (cjkLeg): normalized content and the
	// lowercased author name.
	return kwindex.Doc{ID: m.ID, Content: memory.SearchText(m.Content), Author: memory.SearchText(m.Provenance.Author),
		Grams: m.Normalized + " " + strings.ToLower(m.Provenance.Author), Meta: metaOf(&m)}, scopeKey, live, nil
}

// ready returns the scope's index when it can answer now. Otherwise it starts building it
// (in the query for a small scope, in the background for a large one) and returns nil.
func (k *keywordIndexes) ready(ctx context.Context, d *db, key string) (*kwindex.Scope, error) {
	sc := k.scope(key)
	if sc.ready.Load() {
		return sc.idx, nil
	}
	var size int
	if err := d.read.QueryRowContext(ctx, `SELECT coalesce((SELECT live FROM memory_counts WHERE scope_key = ?), 0)`, key).Scan(&size); err != nil {
		return nil, fmt.Errorf("couldn't count memories: %w", err)
	}
	if size <= d.KeywordSyncBuild {
		if !sc.building.CompareAndSwap(false, true) {
			return nil, nil // another query is building it
		}
		defer sc.building.Store(false)
		if err := k.build(ctx, d, key, sc); err != nil {
			return nil, err
		}
		return sc.idx, nil
	}
	if sc.building.CompareAndSwap(false, true) {
		k.mu.Lock()
		if k.closed {
			k.mu.Unlock()
			sc.building.Store(false)
			return nil, nil
		}
		k.wg.Add(1)
		k.mu.Unlock()
		go func() {
			defer k.wg.Done()
			defer sc.building.Store(false)
			// A background build outlives the query that asked for it, not the store.
			_ = k.build(context.WithoutCancel(ctx), d, key, sc)
		}()
	}
	return nil, nil
}

// scope returns the entry of key, creating it, and marks it as just used for eviction.
func (k *keywordIndexes) scope(key string) *keywordScope {
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := k.scopes[key]
	if sc == nil {
		sc = &keywordScope{}
		k.scopes[key] = sc
	}
	sc.lastUsed.Store(k.clock.Add(1))
	return sc
}

// build loads the scope's live rows into its index and marks it ready. The rows and the
// change log position are read in one snapshot, and the changes written since are applied
// before the index answers, so nothing written during the build is missed.
func (k *keywordIndexes) build(ctx context.Context, d *db, key string, sc *keywordScope) error {
	tx, err := d.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("couldn't read memories: %w", err)
	}
	defer tx.Rollback()
	var at int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM memory_changes`).Scan(&at); err != nil {
		return fmt.Errorf("couldn't read the change log: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+keywordColumns+` FROM memories WHERE scope_key = ? AND deleted_at IS NULL`, key)
	if err != nil {
		return fmt.Errorf("couldn't read memories: %w", err)
	}
	var docs []kwindex.Doc
	for rows.Next() {
		doc, _, _, err := scanKeywordDoc(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read memory row: %w", err)
		}
		docs = append(docs, doc)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't read memories: %w", err)
	}
	_ = tx.Rollback()
	idx := kwindex.NewScope(d.KeywordParams)
	idx.Put(docs...)

	// Apply what changed since the snapshot, under the catch-up lock so the global
	// position and this scope agree when it turns ready.
	k.catchUp.Lock()
	defer k.catchUp.Unlock()
	if err := k.applyRange(ctx, d, at, k.applied.Load(), map[string]*kwindex.Scope{key: idx}); err != nil {
		return err
	}
	k.mu.Lock()
	sc.idx = idx
	sc.ready.Store(true)
	k.mu.Unlock()
	k.evict(d.KeywordIndexMax)
	return nil
}

// sync applies every change logged since the last one applied to the ready scopes. It runs
// before each keyword query.
func (k *keywordIndexes) sync(ctx context.Context, d *db) error {
	last, first, err := d.changeLogEnds(ctx)
	if err != nil {
		return err
	}
	if last <= k.applied.Load() {
		return nil
	}
	k.catchUp.Lock()
	defer k.catchUp.Unlock()
	from := k.applied.Load()
	if last <= from {
		return nil
	}
	if from == 0 && !k.anyReady() {
		// Nothing is built yet, so nothing needs the log's past: start reading from here
		// (a build reads the rows themselves) instead of replaying the whole log.
		k.applied.Store(last)
		return nil
	}
	if first > from+1 {
		// Retention trimmed changes this process never read: start over.
		k.dropAll()
		k.applied.Store(last)
		return nil
	}
	if err := k.applyRange(ctx, d, from, last, k.readyScopes()); err != nil {
		return err
	}
	k.applied.Store(last)
	return nil
}

// changeLogEnds returns the newest and oldest sequence numbers of the change log (0 when
// it is empty), through a statement kept prepared: it runs before every keyword query.
func (d *db) changeLogEnds(ctx context.Context) (last, first int64, err error) {
	// Two subqueries: SQLite answers a lone min() or max() of the primary key from the
	// b-tree's ends, but one SELECT with both scans the table.
	rows, err := d.recall.stmts.query(ctx, d.read, `SELECT coalesce((SELECT max(seq) FROM memory_changes), 0),
		coalesce((SELECT min(seq) FROM memory_changes), 0)`)
	if err != nil {
		return 0, 0, fmt.Errorf("couldn't read the change log: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		err = rows.Scan(&last, &first)
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("couldn't read the change log: %w", err)
	}
	return last, first, nil
}

// applyRange applies the changes with sequence numbers in (from, to] to the given indexes.
func (k *keywordIndexes) applyRange(ctx context.Context, d *db, from, to int64, scopes map[string]*kwindex.Scope) error {
	if to <= from || len(scopes) == 0 {
		return nil
	}
	rows, err := d.read.QueryContext(ctx, `SELECT DISTINCT memory_id FROM memory_changes WHERE seq > ? AND seq <= ?`, from, to)
	if err != nil {
		return fmt.Errorf("couldn't read the change log: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read the change log: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't read the change log: %w", err)
	}
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		// Every changed id leaves every index first: a memory may have moved scope, been
		// forgotten or purged (then it has no row at all).
		for _, idx := range scopes {
			idx.Remove(batch...)
		}
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		rows, err := d.read.QueryContext(ctx, `SELECT `+keywordColumns+` FROM memories WHERE id IN (`+placeholders(len(batch))+`)`, args...)
		if err != nil {
			return fmt.Errorf("couldn't read changed memories: %w", err)
		}
		add := map[string][]kwindex.Doc{}
		for rows.Next() {
			doc, key, live, err := scanKeywordDoc(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("couldn't read memory row: %w", err)
			}
			if _, ok := scopes[key]; ok && live {
				add[key] = append(add[key], doc)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("couldn't read changed memories: %w", err)
		}
		for key, docs := range add {
			scopes[key].Put(docs...)
		}
	}
	return nil
}

func (k *keywordIndexes) readyScopes() map[string]*kwindex.Scope {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]*kwindex.Scope, len(k.scopes))
	for key, sc := range k.scopes {
		if sc.ready.Load() {
			out[key] = sc.idx
		}
	}
	return out
}

func (k *keywordIndexes) anyReady() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, sc := range k.scopes {
		if sc.ready.Load() {
			return true
		}
	}
	return false
}

// dropAll forgets every index; each is rebuilt on its next use.
func (k *keywordIndexes) dropAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, sc := range k.scopes {
		if !sc.building.Load() {
			delete(k.scopes, key)
		}
	}
}

// evict drops the least recently searched ready scopes while the indexes hold more than
// max memories.
func (k *keywordIndexes) evict(max int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	type entry struct {
		key  string
		used int64
		n    int
	}
	var all []entry
	total := 0
	for key, sc := range k.scopes {
		if !sc.ready.Load() {
			continue
		}
		n := sc.idx.Len()
		total += n
		all = append(all, entry{key, sc.lastUsed.Load(), n})
	}
	if max <= 0 || total <= max {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used < all[j].used })
	for _, e := range all[:len(all)-1] { // the scope just used stays
		if total <= max {
			break
		}
		delete(k.scopes, e.key)
		total -= e.n
	}
}

// indexLeg answers the word leg from the in-memory indexes of the visible scopes: the best
// limit memories over all of them, each scored with its own scope's statistics. It returns
// false when some scope's index is not ready yet; the caller then uses FTS5.
func (s *Recall) indexLeg(ctx context.Context, search func(idx *kwindex.Scope, f *vecindex.Filter, limit int) []kwindex.Hit,
	q *memory.SearchQuery, vis []memory.Visible, where string, args []any, limit int, weight float64, out map[int64]float64) (bool, error) {
	k := &s.db.recall.keywords
	if s.db.KeywordIndexOff {
		return false, nil
	}
	// keywordLeg brought the indexes up to date with the change log before its first leg.
	idxs := make([]*kwindex.Scope, len(vis))
	for i, v := range vis {
		idx, err := k.ready(ctx, s.db, v.Owner.Key())
		if err != nil || idx == nil {
			return false, err
		}
		idxs[i] = idx
	}
	// Decay only lowers importance, so the index's filter on the base importance keeps a
	// superset; SQL then applies the decayed one, which can cut into the top, so that case
	// takes every match.
	perScope := limit
	if q.ImportanceMin > 0 {
		perScope = 0
	}
	var hits []kwindex.Hit
	for i, v := range vis {
		hits = append(hits, search(idxs[i], vectorFilter(v, q), perScope)...)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if q.ImportanceMin <= 0 {
		for _, h := range hits[:min(limit, len(hits))] {
			out[h.ID] += weight * h.Score
		}
		return true, nil
	}
	kept := 0
	for start := 0; start < len(hits) && kept < limit; start += 4 * limit {
		batch := hits[start:min(start+4*limit, len(hits))]
		ids := make([]int64, len(batch))
		for i, h := range batch {
			ids[i] = h.ID
		}
		visible, err := s.visibleIDs(ctx, ids, where, args)
		if err != nil {
			return false, err
		}
		for _, h := range batch {
			if _, ok := visible[h.ID]; ok && kept < limit {
				out[h.ID] += weight * h.Score
				kept++
			}
		}
	}
	return true, nil
}

// KeywordIndexHolds reports whether any in-memory keyword index holds word; forget-me
// tests use it to prove a member's words left memory too.
func (s *Recall) KeywordIndexHolds(word string) bool {
	for _, idx := range s.db.recall.keywords.readyScopes() {
		if idx.Holds(word) {
			return true
		}
	}
	return false
}

// WarmKeywordIndex builds the keyword indexes of the given scopes now and waits for them,
// so a benchmark or an operator's warm-up times a ready index rather than its build.
func (s *Recall) WarmKeywordIndex(ctx context.Context, owners ...memory.Owner) error {
	k := &s.db.recall.keywords
	// Catch up first, so the log's position is set before the builds (sync).
	if err := k.sync(ctx, s.db); err != nil {
		return err
	}
	for _, o := range owners {
		key := o.Key()
		sc := k.scope(key)
		if sc.ready.Load() {
			continue
		}
		if err := k.build(ctx, s.db, key, sc); err != nil {
			return err
		}
	}
	return nil
}

// Settle waits until the background loads that recalls started have finished: keyword
// index builds and vector loads. It is for measuring a process at rest (kioku bench reads
// resident memory after it); callers stop recalling first, since loads started while it
// waits may or may not be waited for.
func (s *Recall) Settle(ctx context.Context) error {
	k := &s.db.recall.keywords
	built := make(chan struct{})
	go func() {
		k.wg.Wait()
		close(built)
	}()
	select {
	case <-built:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return s.db.recall.vectors.Settle(ctx)
}
