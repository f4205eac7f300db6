package bench

import (
	"context"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// memory is corpus memory i as an import writes it.
func (r *run) memory(i int) memory.Memory {
	c := r.c
	sc := c.scopes[c.scopeOf[i]]
	a := c.authors[i]
	m := memory.Memory{Scope: memory.ScopeServer, GuildID: sc.id, Content: c.texts[i], Source: memory.SourceImport,
		Provenance: memory.Provenance{Author: cast[a].name, AuthorID: userID(a)}, CreatedAt: c.created[i]}
	if sc.personal {
		m.Scope, m.UserID, m.GuildID = memory.ScopePersonal, sc.id, sc.origin
		m.Provenance.AuthorID = sc.id
	}
	return m
}

// load writes the corpus's memories (only those of members when it is not nil) and returns
// their ids by corpus index. The last ones go through Remember one by one; the rest through
// the bulk path. rep gets the write rates unless members is set.
func (r *run) load(ctx context.Context, store *ltm.Store, members []int, rep *Report) ([]int64, error) {
	order := members
	if order == nil {
		order = make([]int, len(r.c.texts))
		for i := range order {
			order[i] = i
		}
	}
	n := len(order)
	single := min(max(n/50, 200), 2000, n/2)
	bulk := n - single
	ids := make([]int64, len(r.c.texts))
	start := time.Now()
	const chunk = 5000
	for lo := 0; lo < bulk; lo += chunk {
		hi := min(lo+chunk, bulk)
		batch := make([]memory.Memory, 0, hi-lo)
		for _, i := range order[lo:hi] {
			batch = append(batch, r.memory(i))
		}
		res, err := store.Transfer.RememberMany(ctx, batch, "bench")
		if err != nil {
			return nil, err
		}
		for k, id := range res.IDs {
			ids[order[lo+k]] = id
		}
		if lo%(chunk*4) == 0 {
			r.progress("  loaded %d", hi)
		}
	}
	// The words of what was written are counted a moment after each write: the rates
	// include that work.
	if err := store.Recall.Settle(ctx); err != nil {
		return nil, err
	}
	writePerS := 0.0
	if bulk > 0 {
		writePerS = round1(float64(bulk) / time.Since(start).Seconds())
	}
	start1 := time.Now()
	for _, i := range order[bulk:] {
		res, err := store.Memories.Remember(ctx, r.memory(i), "bench")
		if err != nil {
			return nil, err
		}
		ids[i] = res.Memory.ID
	}
	if err := store.Recall.Settle(ctx); err != nil {
		return nil, err
	}
	if members == nil {
		rep.WritePerS = writePerS
		rep.RememberPerS = round1(float64(single) / time.Since(start1).Seconds())
		rep.LoadSeconds = round1(time.Since(start).Seconds())
		r.progress("bulk write: %.0f memories/s, one-by-one remember: %.0f memories/s", rep.WritePerS, rep.RememberPerS)
	}
	return ids, nil
}
