// Package eval runs kioku's retrieval evaluation (SPEC §8): it loads a dataset of chat
// memories and questions into a fresh temporary store through the real write path, asks the
// real recall every question in its server's scope, and scores the rankings.
package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// DefaultK is the cut-offs reported when Options.K is empty.
var DefaultK = []int{1, 5, 10}

// Options configures Run.
type Options struct {
	// Dataset is the path of the dataset file.
	Dataset string
	// K lists the recall@k cut-offs to report; empty means DefaultK.
	K []int
	// Embed and EmbedModel, when set, give the store an embedding model so recall is hybrid;
	// without them the eval measures keyword recall alone (the bot without an embedding model).
	Embed      ltm.EmbedFunc
	EmbedModel string
	// Dir is where the temporary database is created; empty means the system temp dir. The
	// database is removed when Run returns.
	Dir string
	// Tune, when set, adjusts the store before the dataset is loaded (recall parameters
	// under study: BM25's, a stage switched off).
	Tune func(*ltm.Store)
}

// SkipReasons describes, for each key of Report.SkippedReasons, why the write path refused
// the memories counted under it.
var SkipReasons = map[string]string{
	"empty":    "empty content",
	"too_long": fmt.Sprintf("over %d characters", memory.MaxContentRunes),
	"secret":   "looks like a credential",
	"invalid":  "refused by the write path",
}

// Run evaluates recall on the dataset at opt.Dataset.
func Run(ctx context.Context, opt Options) (Report, error) {
	d, err := Load(opt.Dataset)
	if err != nil {
		return Report{}, err
	}
	return RunDataset(ctx, d, opt)
}

// RunDataset evaluates recall on an already loaded dataset (opt.Dataset is ignored).
//
// The run does not depend on the day it happens: the store's clock, which importance decay
// counts from, reads each scope's newest memory time while the scope loads and the query's
// asked time (Scope.AskedAt) while a query runs, never the wall clock.
func RunDataset(ctx context.Context, d Dataset, opt Options) (Report, error) {
	if err := d.validate(); err != nil {
		return Report{}, fmt.Errorf("invalid dataset: %w", err)
	}
	ks, err := cutoffs(opt.K)
	if err != nil {
		return Report{}, err
	}
	dir, err := os.MkdirTemp(opt.Dir, "kioku-eval-")
	if err != nil {
		return Report{}, fmt.Errorf("couldn't create eval directory: %w", err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "eval.db"))
	if err != nil {
		return Report{}, err
	}
	defer store.Close()
	if opt.Tune != nil {
		opt.Tune(store)
	}
	e := &evalRun{store: store, ks: ks, limit: max(10, ks[len(ks)-1]),
		rep: Report{Name: d.Name, K: ks, SkippedReasons: map[string]int{}}}
	e.clock.Store(time.Now().UnixNano())
	store.Now = func() time.Time { return time.Unix(0, e.clock.Load()).UTC() }
	if opt.Embed != nil {
		store.Recall.SetEmbedder(opt.Embed, opt.EmbedModel)
	}
	if e.base, err = openBaseline(ctx, filepath.Join(dir, "baseline.db")); err != nil {
		return Report{}, err
	}
	defer e.base.Close()

	for _, sc := range d.Scopes {
		if err := e.scope(ctx, sc); err != nil {
			return Report{}, err
		}
	}
	e.rep.Overall = aggregate(e.all, ks)
	e.rep.Baseline = aggregate(e.baseRes, ks)
	e.rep.ByCategory = byCategory(e.all, ks)
	e.rep.BaselineByCategory = byCategory(e.baseRes, ks)
	return e.rep, nil
}

// cutoffs is the sorted, distinct recall@k cut-offs of k, DefaultK when it is empty.
func cutoffs(k []int) ([]int, error) {
	ks := slices.Clone(k)
	if len(ks) == 0 {
		ks = slices.Clone(DefaultK)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if ks[0] < 1 || ks[len(ks)-1] > 100 {
		return nil, fmt.Errorf("recall cut-offs must be between 1 and 100, got %v", ks)
	}
	return ks, nil
}

// evalRun is one evaluation's state: the store and baseline the scopes are loaded into,
// the store's clock, and the scored queries so far.
type evalRun struct {
	store *ltm.Store
	base  *baseline
	clock atomic.Int64 // the store's clock, Unix nanoseconds
	ks    []int
	limit int // how many results recall and the baseline return

	rep          Report
	all, baseRes []queryResult
}

// scope loads one dataset scope into the store and the baseline, then asks its queries.
func (e *evalRun) scope(ctx context.Context, sc Scope) error {
	// A scope without any created_at keeps the clock where it is: its memories are
	// stamped with it, so decay still counts from the same instant.
	newest := sc.newest()
	if !newest.IsZero() {
		e.clock.Store(newest.UnixNano())
	}
	owner := memory.ServerOwner(sc.GuildID)
	entries, reasons := admit(owner, sc.Memories)
	for r, n := range reasons {
		e.rep.SkippedReasons[r] += n
		e.rep.Skipped += n
	}
	absorbed, stored, err := load(ctx, e.store, owner, entries)
	if err != nil {
		return fmt.Errorf("couldn't load scope %s: %w", sc.GuildID, err)
	}
	// The eval measures a running bot's recall, whose keyword index is built: build it
	// now rather than let the first questions of a large scope go to the full-text index.
	if err := e.store.Recall.WarmKeywordIndex(ctx, owner); err != nil {
		return err
	}
	if err := e.base.add(ctx, sc.GuildID, entries); err != nil {
		return err
	}
	e.rep.Memories += len(sc.Memories)
	e.rep.Stored += stored
	loaded := make(map[string]bool, len(entries))
	for _, en := range entries {
		loaded[en.ID] = true
	}
	for _, q := range sc.Queries {
		q.Relevant = slices.DeleteFunc(slices.Clone(q.Relevant), func(id string) bool { return !loaded[id] })
		if len(q.Relevant) == 0 {
			e.rep.SkippedQueries++
			continue
		}
		if err := e.ask(ctx, sc, owner, absorbed, q); err != nil {
			return err
		}
	}
	return nil
}

// ask asks q of recall and of the baseline at its asked time and scores both rankings;
// absorbed maps each stored memory to the dataset ids it holds.
func (e *evalRun) ask(ctx context.Context, sc Scope, owner memory.Owner, absorbed map[int64][]string, q Query) error {
	askedAt, _ := sc.AskedAt(q) // validated before the run
	if askedAt.IsZero() {
		askedAt = e.store.Now()
	}
	e.clock.Store(askedAt.UnixNano())
	start := time.Now()
	res, err := e.store.Recall.Search(ctx, memory.SearchQuery{Text: q.Text, Owners: []memory.Owner{owner}, Limit: e.limit, AskedAt: askedAt})
	took := time.Since(start)
	if err != nil {
		return fmt.Errorf("query %s of scope %s: %w", q.ID, sc.GuildID, err)
	}
	ranked := make([][]string, len(res))
	for i, r := range res {
		ranked[i] = absorbed[r.Memory.ID]
	}
	qr := score(q, ranked, e.ks, took)
	e.all = append(e.all, qr)
	e.rep.Outcomes = append(e.rep.Outcomes, Outcome{Scope: sc.GuildID, QueryID: q.ID, Category: q.Category,
		AskedAt: askedAt, Recall10: qr.recall[10], RR: qr.rr})
	start = time.Now()
	branked, err := e.base.search(ctx, sc.GuildID, q.Text, e.limit)
	took = time.Since(start)
	if err != nil {
		return fmt.Errorf("baseline for query %s of scope %s: %w", q.ID, sc.GuildID, err)
	}
	e.baseRes = append(e.baseRes, score(q, branked, e.ks, took))
	if qr.rr == 0 || qr.recall[10] == 0 {
		e.rep.Misses = append(e.rep.Misses, Miss{Scope: sc.GuildID, QueryID: q.ID, Text: q.Text, Category: q.Category})
	}
	return nil
}

// admit returns the entries the write path accepts, and how many it refuses per reason
// (the keys of SkipReasons). The check is the write path's own (memory.Memory.Prepare); the
// reason is worked out only for a refused entry.
func admit(owner memory.Owner, entries []MemoryEntry) ([]MemoryEntry, map[string]int) {
	kept := make([]MemoryEntry, 0, len(entries))
	reasons := map[string]int{}
	for _, e := range entries {
		m := entryMemory(owner, e)
		if err := m.Prepare(); err != nil {
			reasons[skipReason(e.Content)]++
			continue
		}
		kept = append(kept, e)
	}
	return kept, reasons
}

// skipReason names the rule of memory.CleanContent that content breaks.
func skipReason(content string) string {
	c := memory.CollapseSpace(content)
	switch {
	case c == "":
		return "empty"
	case utf8.RuneCountInString(c) > memory.MaxContentRunes:
		return "too_long"
	}
	if _, ok := memory.DetectSecret(c); ok {
		return "secret"
	}
	return "invalid"
}

// evalChannel is the channel every dataset message was said in: a dataset scope is one
// server's conversation, read as one channel.
const evalChannel = "eval"

// entryMemory is the memory an import makes of a dataset entry: its author, channel and
// creation time kept.
func entryMemory(owner memory.Owner, e MemoryEntry) memory.Memory {
	return memory.Memory{Scope: owner.Scope, GuildID: owner.GuildID, Content: e.Content,
		Source: memory.SourceImport, Provenance: memory.Provenance{Author: e.Author, ChannelID: evalChannel},
		CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt}
}

// load writes a scope's memories through RememberMany, the bulk write path, keeping author
// and creation time as an import does, and returns which dataset ids each stored memory
// absorbed (more than one when the write path deduplicated them).
func load(ctx context.Context, s *ltm.Store, owner memory.Owner, entries []MemoryEntry) (map[int64][]string, int, error) {
	if len(entries) == 0 {
		return map[int64][]string{}, 0, nil
	}
	mems := make([]memory.Memory, len(entries))
	for i, e := range entries {
		mems[i] = entryMemory(owner, e)
	}
	res, err := s.Transfer.RememberMany(ctx, mems, "eval")
	if err != nil {
		return nil, 0, err
	}
	// What a memory adds to its scope's word company is counted a moment after the write.
	if err := s.Recall.Settle(ctx); err != nil {
		return nil, 0, err
	}
	if len(res.IDs) != len(entries) {
		return nil, 0, fmt.Errorf("write path returned %d ids for %d memories", len(res.IDs), len(entries))
	}
	absorbed := make(map[int64][]string, len(entries))
	for i, id := range res.IDs {
		absorbed[id] = append(absorbed[id], entries[i].ID)
	}
	return absorbed, res.Created, nil
}
