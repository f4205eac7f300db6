package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// scopeKey is the baseline's scope restriction: none with one scope (the plain query over
// every row, as before), else the guild's rows.
func (r *run) scopeKey(s int) string {
	if len(r.c.scopes) == 1 {
		return ""
	}
	return r.owner(s).Key()
}

// hot times every leg and both baselines for the hot guild's queries.
func (r *run) hot(ctx context.Context, store *ltm.Store, raw *sql.DB, alone *aloneDB, index map[int64]int, rep *Report) error {
	tally := hotTally{index: index, kinds: map[string]*[3][]time.Duration{}}
	r.progress("running %d queries", len(r.c.queries))
	for _, q := range r.c.queries {
		if err := r.hotQuery(ctx, store, raw, alone, q, &tally); err != nil {
			return err
		}
	}
	tally.report(rep, alone, r.opt.Reference != nil)
	return nil
}

// hotQuery asks q every way the hot guild is measured, in a fixed order so each leg meets
// the caches the same way, and adds the timings and hits to tally.
func (r *run) hotQuery(ctx context.Context, store *ltm.Store, raw *sql.DB, alone *aloneDB, q query, tally *hotTally) error {
	owner := r.owner(q.scope)
	t := time.Now()
	res, err := store.Recall.Search(ctx, r.search(q, false))
	dRecall := time.Since(t)
	if err != nil {
		return err
	}
	if alone != nil {
		if err := alone.time(ctx, r, q); err != nil {
			return err
		}
	}
	tally.hybridHits(q, res)

	t = time.Now()
	kwRes, err := store.Recall.Search(ctx, r.search(q, true))
	dKeyword := time.Since(t)
	if err != nil {
		return err
	}
	if r.opt.Reference != nil {
		ref, err := r.opt.Reference(ctx, store, r.search(q, true))
		if err != nil {
			return fmt.Errorf("couldn't compute reference ranking: %w", err)
		}
		tally.referenceOverlap(ref, kwRes)
	}

	t = time.Now()
	ann := store.Recall.NearestMemories(owner, q.vec, 10, false)
	tally.vector = append(tally.vector, time.Since(t))

	t = time.Now()
	exact := store.Recall.NearestMemories(owner, q.vec, 10, true)
	tally.brute = append(tally.brute, time.Since(t))

	t = time.Now()
	if err := ftsOnly(ctx, raw, q.text, r.scopeKey(q.scope)); err != nil {
		return err
	}
	tally.timed(q.kind, dRecall, dKeyword, time.Since(t))
	tally.vectorHits(q, ann, exact)
	return nil
}

// hotTally gathers the hot guild's timings and hit counts, query by query.
type hotTally struct {
	index                                 map[int64]int // memory id → corpus index
	recall, keyword, vector, brute, fts   []time.Duration
	kinds                                 map[string]*[3][]time.Duration // recall, keyword, fts by query kind
	srcANN, srcExact, srcHybrid, overlap  float64
	kwOverlap                             float64
	withSource, hybridCounted, refCounted int
}

// timed records one query's recall, keyword-only recall and FTS5 baseline times.
func (t *hotTally) timed(kind string, recall, keyword, fts time.Duration) {
	t.recall, t.keyword, t.fts = append(t.recall, recall), append(t.keyword, keyword), append(t.fts, fts)
	k := t.kinds[kind]
	if k == nil {
		k = &[3][]time.Duration{}
		t.kinds[kind] = k
	}
	k[0], k[1], k[2] = append(k[0], recall), append(k[1], keyword), append(k[2], fts)
}

// hybridHits counts whether full recall found q's source; short queries have too few
// words to be fair to it.
func (t *hotTally) hybridHits(q query, res []memory.SearchResult) {
	if q.source < 0 || q.kind == "short" {
		return
	}
	t.hybridCounted++
	for _, h := range res {
		if t.index[h.Memory.ID] == q.source {
			t.srcHybrid++
			break
		}
	}
}

// referenceOverlap adds the share of the reference ranking ref that keyword-only recall
// also returned.
func (t *hotTally) referenceOverlap(ref []int64, kwRes []memory.SearchResult) {
	if len(ref) == 0 {
		return
	}
	t.refCounted++
	got := map[int64]bool{}
	for _, h := range kwRes {
		got[h.Memory.ID] = true
	}
	shared := 0
	for _, id := range ref {
		if got[id] {
			shared++
		}
	}
	t.kwOverlap += float64(shared) / float64(len(ref))
}

// vectorHits counts whether the vector leg and the exact scan found q's source, and how
// much of the exact top 10 the vector leg shares.
func (t *hotTally) vectorHits(q query, ann, exact []ltm.VectorHit) {
	if q.source < 0 {
		return
	}
	t.withSource++
	inExact := map[int64]bool{}
	for _, h := range exact {
		inExact[h.ID] = true
		if t.index[h.ID] == q.source {
			t.srcExact++
		}
	}
	shared := 0
	for _, h := range ann {
		if inExact[h.ID] {
			shared++
		}
		if t.index[h.ID] == q.source {
			t.srcANN++
		}
	}
	t.overlap += float64(shared) / float64(max(1, len(exact)))
}

// report writes the percentiles and shares into rep.
func (t *hotTally) report(rep *Report, alone *aloneDB, withReference bool) {
	rep.RecallP50Ms, rep.RecallP99Ms = pct(t.recall, 0.50), pct(t.recall, 0.99)
	rep.KeywordP50Ms, rep.KeywordP99Ms = pct(t.keyword, 0.50), pct(t.keyword, 0.99)
	rep.VectorP50Ms, rep.VectorP99Ms = pct(t.vector, 0.50), pct(t.vector, 0.99)
	rep.BruteforceP50Ms, rep.BruteforceP99Ms = pct(t.brute, 0.50), pct(t.brute, 0.99)
	rep.FTSOnlyP50Ms, rep.FTSOnlyP99Ms = pct(t.fts, 0.50), pct(t.fts, 0.99)
	rep.VectorSpeedup = ratio(rep.BruteforceP50Ms, rep.VectorP50Ms)
	rep.RecallVsFTS = ratio(rep.RecallP99Ms, rep.FTSOnlyP99Ms)
	rep.KeywordVsFTS = ratio(rep.KeywordP99Ms, rep.FTSOnlyP99Ms)
	if alone != nil {
		rep.AloneRecallP50Ms, rep.AloneRecallP99Ms = pct(alone.recall, 0.50), pct(alone.recall, 0.99)
		rep.AloneFTSP99Ms = pct(alone.fts, 0.99)
		rep.SharedVsAlone = ratio(rep.RecallP99Ms, rep.AloneRecallP99Ms)
	}
	ns := float64(max(t.withSource, 1))
	rep.SourceAt10 = round4(t.srcANN / ns)
	rep.ExactSourceAt10 = round4(t.srcExact / ns)
	rep.OverlapAt10 = round4(t.overlap / ns)
	rep.HybridSourceAt10 = round4(t.srcHybrid / float64(max(t.hybridCounted, 1)))
	if withReference {
		v := round4(t.kwOverlap / float64(max(t.refCounted, 1)))
		rep.KeywordOverlapAt10 = &v
	}
	rep.ByQueryKind = map[string]KindReport{}
	for name, k := range t.kinds {
		rep.ByQueryKind[name] = KindReport{Queries: len(k[0]), RecallP50Ms: pct(k[0], 0.50), RecallP99Ms: pct(k[0], 0.99),
			KeywordP99: pct(k[1], 0.99), FTSOnlyP99: pct(k[2], 0.99)}
	}
}

// buckets times recall, keyword-only recall and the scoped FTS5 baseline in the medium and
// small guilds and in personal memory.
func (r *run) buckets(ctx context.Context, store *ltm.Store, raw *sql.DB, rep *Report) error {
	for _, b := range []string{"medium", "small", "personal"} {
		qs := r.c.bucketQueries[b]
		if len(qs) == 0 {
			continue
		}
		br := BucketReport{Bucket: b, Queries: len(qs)}
		for _, s := range r.c.scopes {
			if s.bucket == b {
				br.Scopes++
				br.Memories += len(s.members)
			}
		}
		r.progress("running %d queries in %d %s scopes", len(qs), br.Scopes, b)
		var recall, keyword, fts []time.Duration
		for _, q := range qs {
			t := time.Now()
			if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
				return err
			}
			recall = append(recall, time.Since(t))
			t = time.Now()
			if _, err := store.Recall.Search(ctx, r.search(q, true)); err != nil {
				return err
			}
			keyword = append(keyword, time.Since(t))
			t = time.Now()
			if err := ftsOnly(ctx, raw, q.text, r.scopeKey(q.scope)); err != nil {
				return err
			}
			fts = append(fts, time.Since(t))
		}
		br.RecallP50Ms, br.RecallP99Ms = pct(recall, 0.50), pct(recall, 0.99)
		br.KeywordP99Ms, br.FTSOnlyP99Ms = pct(keyword, 0.99), pct(fts, 0.99)
		rep.ByScopeSize = append(rep.ByScopeSize, br)
	}
	return nil
}
