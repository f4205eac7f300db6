package ltm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// DefaultEmbedTrackTimeout bounds one embedding call of the tracker. A batch of short
// memories takes well under a second on a hosted provider and a few seconds on a local
// model on a CPU; a provider slower than this is treated as down until the next run.
const DefaultEmbedTrackTimeout = 30 * time.Second

// gap is a live memory without a usable vector of the model for its content.
type gap struct {
	m     *memory.Memory
	stale bool // it had a vector before: edited since written, or another model's only
}

// TrackEmbeddings is one run of the embedding tracker: it gives live memories without a
// vector of the configured model for their current content (written while the provider was
// down, edited since, or embedded with another model) their vector, least recently changed
// first, opt.Batch memories per provider call and at most opt.MaxCalls calls, and puts them
// in the in-memory index so recall uses them at once. The in-memory index tells which
// memories need a look: those missing from it with their current content get their cached
// vector when the database has one (all of them on the first run of a process, and those
// another process wrote since) and are embedded otherwise. No provider call happens inside a
// write transaction: each batch's vectors are stored afterwards in one short transaction,
// and only for content a live memory still has, so a memory forgotten meanwhile leaves no
// vector behind.
//
// When the provider is marked down, fails or times out, the run stops there and says why
// in Skipped; what earlier batches stored is kept, and nothing else changes. Errors are
// the database's (or ctx's). Runs are serialised. With no embedder it does nothing.
func (s *Recall) TrackEmbeddings(ctx context.Context, opt memory.EmbedTrackOptions) (memory.EmbedTrackResult, error) {
	r := &s.db.recall
	var res memory.EmbedTrackResult
	e := r.emb.Load()
	if e == nil {
		return res, nil
	}
	r.trackMu.Lock()
	defer r.trackMu.Unlock()
	batch := opt.Batch
	if batch <= 0 {
		batch = embedChunk
	}
	timeout := opt.CallTimeout
	if timeout <= 0 {
		timeout = DefaultEmbedTrackTimeout
	}
	keep := -1 // how many gaps this run can fill; the rest are only counted
	if opt.MaxCalls > 0 {
		keep = opt.MaxCalls * batch
	}
	gaps, more, loaded, err := s.findGaps(ctx, e, keep)
	res.Loaded = loaded
	if err != nil {
		return res, err
	}

	filled, vanished := 0, 0
	// Each call embeds one payer's memories and is charged to that payer (ctx); a payer
	// whose budget or rate is spent waits for a later run while the others' go on.
	spent := map[string]bool{}
	for _, pb := range memory.BatchByPayer(gaps, batch, gapPayer) {
		if opt.MaxCalls > 0 && res.Calls >= opt.MaxCalls {
			break
		}
		part := pb.Items
		if spent[pb.Payer.Key()] {
			res.Deferred += len(part)
			continue
		}
		if r.emb.Load() != e {
			res.Skipped = "the embedding model changed during the run"
			break
		}
		if r.down(s.db.Now()) {
			res.Skipped = s.downReason()
			break
		}
		vecs, err := s.embedGaps(memory.WithPayer(ctx, pb.Payer), e, part, timeout)
		if errors.Is(err, memory.ErrSpendLimited) {
			spent[pb.Payer.Key()] = true
			res.Deferred += len(part)
			continue
		}
		res.Calls++
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("couldn't embed memories: %w", context.Cause(ctx))
			}
			r.noteEmbedError(s.db.Now(), s.db.EmbedRetryAfter, err)
			res.Skipped = "embedding provider failed: " + err.Error()
			break
		}
		stored, err := s.db.vectors.storeLiveVectors(ctx, e.model, vecs)
		if err != nil {
			return res, err
		}
		got, gone, err := s.indexGaps(ctx, e, part, vecs, stored)
		if err != nil {
			return res, err
		}
		vanished += gone
		for _, g := range got {
			filled++
			if g.stale {
				res.Refreshed++
			} else {
				res.Embedded++
			}
		}
	}
	res.Missing = max(0, len(gaps)+more-filled-vanished)
	return res, nil
}

// gapPayer is who pays for embedding g's memory.
func gapPayer(g gap) memory.Payer { return memory.PayerOf(g.m) }

// downReason says why embedding is skipped while the provider is marked down.
func (s *Recall) downReason() string {
	r := &s.db.recall
	r.mu.Lock()
	last := r.lastErr
	r.mu.Unlock()
	until := time.UnixMilli(r.downUntil.Load()).UTC().Format(time.RFC3339)
	if last == "" {
		return "embedding provider marked down until " + until
	}
	return "embedding provider marked down until " + until + " after: " + last
}

// gapChunk is how many memories one query of findGaps reads with their vectors.
const gapChunk = 500

// findGaps finds the live memories without a vector of e's model in the index. Two reads
// find them without touching every vector: the memories of any scope that have no stored
// vector of the model (through two key-only indexes), and, for the
// scopes the index holds, the memories missing from it with their current content (another
// process wrote them) — the index also drops there what the database no longer has live
// (another process forgot it). Scopes that are not resident are left alone: their next load
// reads the database. A memory found that has a usable stored vector goes into the index
// (loaded); otherwise it is a gap. It returns the keep least recently changed gaps (all when
// keep is negative) and how many more there are.
func (s *Recall) findGaps(ctx context.Context, e *embedder, keep int) (gaps []gap, more, loaded int, err error) {
	r := &s.db.recall
	seen := map[int64]bool{}
	var unindexed []int64
	for _, key := range r.vectors.Keys() {
		ids, err := s.syncResident(ctx, key)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				unindexed = append(unindexed, id)
			}
		}
	}
	// Both sides are key-only indexes walked in content-hash order (memories_hash_live and
	// embeddings_keys), so the check reads neither the memories' rows nor any vector:
	// about 2 s at 1.1M memories.
	d := s.db.dialect
	rows, err := s.db.read.QueryContext(ctx, `SELECT m.id FROM `+d.Index("memories m", "memories_hash_live")+`
		WHERE m.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM `+d.Index("embeddings e", "embeddings_keys")+`
		WHERE e.model = ? AND e.content_hash = m.content_hash)`, e.model)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("couldn't list memories to embed: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, 0, fmt.Errorf("couldn't list memories to embed: %w", err)
		}
		if !seen[id] {
			seen[id] = true
			unindexed = append(unindexed, id)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, 0, 0, fmt.Errorf("couldn't list memories to embed: %w", err)
	}
	slices.Sort(unindexed)

	// trim keeps the keep oldest gaps, counting the others, so a large backlog (a new
	// model) does not hold every memory's content in memory.
	trim := func() {
		slices.SortFunc(gaps, func(a, b gap) int {
			if c := a.m.UpdatedAt.Compare(b.m.UpdatedAt); c != 0 {
				return c
			}
			return cmp.Compare(a.m.ID, b.m.ID)
		})
		if keep >= 0 && len(gaps) > keep {
			more += len(gaps) - keep
			gaps = slices.Delete(gaps, keep, len(gaps))
		}
	}
	for start := 0; start < len(unindexed); start += gapChunk {
		part := unindexed[start:min(start+gapChunk, len(unindexed))]
		args := make([]any, 0, len(part)+1)
		args = append(args, e.model)
		for _, id := range part {
			args = append(args, id)
		}
		// A memory edited since it was written, or whose content has another model's
		// vector, had a vector before: it is refreshed, not embedded for the first time.
		rows, err := s.db.read.QueryContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+`, e.vector,
			m.version > 1 OR EXISTS (SELECT 1 FROM embeddings o WHERE o.content_hash = m.content_hash)
			FROM memories m LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?
			WHERE m.id IN (`+placeholders(len(part))+`) AND m.deleted_at IS NULL`, args...)
		if err != nil {
			return gaps, more, loaded, fmt.Errorf("couldn't read memories to embed: %w", err)
		}
		for rows.Next() {
			var (
				blob  []byte
				stale bool
			)
			m, err := scanMemoryWith(rows, &blob, &stale)
			if err != nil {
				rows.Close()
				return gaps, more, loaded, fmt.Errorf("couldn't read memory to embed: %w", err)
			}
			if v := decodeVector(blob); v != nil && r.vectors.Upsert(m.Owner().Key(), m.ID, m.Hash, metaOf(m), v) {
				if r.vectors.Resident(m.Owner().Key()) {
					loaded++
				}
				continue
			}
			// A vector a write is fetching, or has fetched and not stored yet, is on its
			// way: embedding it here would pay for it twice.
			if blob == nil && (r.fetching.has(m.Hash) || r.vectorWrites.waiting(e.model, m.Hash)) {
				continue
			}
			// A stored vector the index refuses (another width under the same model
			// name) is replaced.
			gaps = append(gaps, gap{m: m, stale: stale || blob != nil})
		}
		if err := rows.Close(); err != nil {
			return gaps, more, loaded, fmt.Errorf("couldn't read memories to embed: %w", err)
		}
		if keep >= 0 && len(gaps) > 2*keep+gapChunk {
			trim()
		}
	}
	trim()
	return gaps, more, loaded, nil
}

// syncResident compares resident scope key with the database: it drops from the index the
// ids no longer live there and returns the live ids the index lacks or holds with older
// content. It reads ids and content hashes only (the memories_scope_live index).
func (s *Recall) syncResident(ctx context.Context, key string) ([]int64, error) {
	r := &s.db.recall
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, content_hash FROM `+s.db.dialect.Index("memories", "memories_scope_live")+`
		WHERE scope_key = ? AND deleted_at IS NULL`, key)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the memories of %s: %w", key, err)
	}
	live := map[int64]bool{}
	var missing []int64
	for rows.Next() {
		var (
			id   int64
			hash string
		)
		if err := rows.Scan(&id, &hash); err != nil {
			rows.Close()
			return nil, fmt.Errorf("couldn't list the memories of %s: %w", key, err)
		}
		live[id] = true
		if !r.vectors.Has(key, id, hash) {
			missing = append(missing, id)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("couldn't list the memories of %s: %w", key, err)
	}
	// The ids are read after the rows, so one written by this process meanwhile is in the
	// index but not in live: it is checked again before it is dropped.
	var gone []int64
	for _, id := range r.vectors.IDs(key) {
		if !live[id] {
			gone = append(gone, id)
		}
	}
	for start := 0; start < len(gone); start += gapChunk {
		part := gone[start:min(start+gapChunk, len(gone))]
		still, err := s.liveHashes(ctx, part)
		if err != nil {
			return nil, err
		}
		for _, id := range part {
			if _, ok := still[id]; !ok {
				r.vectors.Remove(key, id)
			}
		}
	}
	return missing, nil
}

// embedGaps makes one provider call for the distinct contents of part, bounded by timeout,
// and returns a vector per content hash. Any failure, an empty vector included, fails the
// whole call: the batch is retried by a later run.
func (s *Recall) embedGaps(ctx context.Context, e *embedder, part []gap, timeout time.Duration) (map[string][]float32, error) {
	var hashes, texts []string
	seen := make(map[string]bool, len(part))
	for _, g := range part {
		if !seen[g.m.Hash] {
			seen[g.m.Hash] = true
			hashes = append(hashes, g.m.Hash)
			texts = append(texts, g.m.Content)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vecs, err := e.fn(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		return nil, err
	}
	out := make(map[string][]float32, len(hashes))
	for i, h := range hashes {
		if len(vecs[i]) == 0 {
			return nil, fmt.Errorf("embedder returned an empty vector for text %d of %d", i+1, len(texts))
		}
		out[h] = vecs[i]
	}
	return out, nil
}

// storeLiveVectors caches vectors by content hash in one write transaction, each only
// while a live memory still has that content: a memory forgotten (or edited) during the
// provider call leaves no vector of its old words. It returns the hashes stored.
func (s vectorStore) storeLiveVectors(ctx context.Context, model string, vecs map[string][]float32) (map[string]bool, error) {
	stored := make(map[string]bool, len(vecs))
	if len(vecs) == 0 {
		return stored, nil
	}
	now := s.nowMillis()
	err := s.withWriteTx(ctx, func(tx *txn) error {
		q := s.stmts.on(tx)
		for h, v := range vecs {
			res, err := q.ExecContext(ctx, storeLiveVectorSQL, h, model, len(v), encodeVector(v), now)
			if err != nil {
				return fmt.Errorf("couldn't store embedding: %w", err)
			}
			if n, err := res.RowsAffected(); err == nil && n > 0 {
				stored[h] = true
			}
		}
		return nil
	})
	if err != nil {
		clear(stored)
	}
	return stored, err
}

// indexGaps puts the memories of part whose vector was stored into the index, then checks
// them against the database: one forgotten meanwhile leaves the index again (its delete
// may have unindexed it before this upsert), and one edited meanwhile loses the old
// content's vector unless its own write already replaced it. It returns the memories that
// are live with the embedded content, and how many of part are gone or changed.
func (s *Recall) indexGaps(ctx context.Context, e *embedder, part []gap, vecs map[string][]float32, stored map[string]bool) ([]gap, int, error) {
	r := &s.db.recall
	var put []gap
	for _, g := range part {
		if stored[g.m.Hash] && r.emb.Load() == e && r.vectors.Upsert(g.m.Owner().Key(), g.m.ID, g.m.Hash, metaOf(g.m), vecs[g.m.Hash]) {
			put = append(put, g)
		}
	}
	ids := make([]int64, len(part))
	for i, g := range part {
		ids[i] = g.m.ID
	}
	live, err := s.liveHashes(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	gone := 0
	for _, g := range part {
		if live[g.m.ID] != g.m.Hash {
			gone++
		}
	}
	put = slices.DeleteFunc(put, func(g gap) bool {
		h, ok := live[g.m.ID]
		switch {
		case !ok:
			r.vectors.Remove(g.m.Owner().Key(), g.m.ID)
		case h != g.m.Hash:
			if r.vectors.Has(g.m.Owner().Key(), g.m.ID, g.m.Hash) {
				r.vectors.Remove(g.m.Owner().Key(), g.m.ID)
			}
		default:
			return false
		}
		return true
	})
	return put, gone, nil
}

// liveHashes returns the content hash of each of ids that is a live memory.
func (s *Recall) liveHashes(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, content_hash FROM memories WHERE id IN (`+
		placeholders(len(ids))+`) AND deleted_at IS NULL`, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't check embedded memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id int64
			h  string
		)
		if err := rows.Scan(&id, &h); err != nil {
			return nil, fmt.Errorf("couldn't check embedded memory: %w", err)
		}
		out[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't check embedded memories: %w", err)
	}
	return out, nil
}

// EmbeddingCoverage reads from the database how many live memories have a vector of model
// for their content. It needs no embedder, so a process that does not embed (`kioku
// doctor`) can report on the bot's progress.
func (s *Recall) EmbeddingCoverage(ctx context.Context, model string) (memory.EmbedCoverage, error) {
	c := memory.EmbedCoverage{Model: model}
	err := s.db.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM embeddings e
		WHERE e.content_hash = m.content_hash AND e.model = ?)) FROM memories m WHERE m.deleted_at IS NULL`, model).
		Scan(&c.Live, &c.Embedded)
	if err != nil {
		return c, fmt.Errorf("couldn't count embedded memories: %w", err)
	}
	return c, nil
}
