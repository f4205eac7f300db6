package ltm

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
)

// bulkEmbed is the embedding side of one bulk write (an import, RememberMany), kept across
// its batches.
//
// Its provider calls are the write's own business: each has its own EmbedTimeout, and a
// failure does not mark the provider down for everyone, since thousands of texts from one
// import say nothing about whether a chat turn's one query will embed in time; the write
// stops calling and leaves the rest to the embedding tracker.
//
// The vectors of a committed batch are fetched (cache, then provider) on a goroutine of
// their own while the next batch is inserted, and stored in that next batch's transaction:
// the provider's latency and the vector work overlap the inserts, a batch costs one commit
// instead of two, and no transaction waits for the provider, since a batch's transaction
// begins only once the previous batch's vectors are in hand.
type bulkEmbed struct {
	db      *db
	failed  bool                // a call failed: the rest of this write is left to the tracker
	pending chan fetchedVectors // the vectors of the last committed batch, being fetched
	// unstored are fetched vectors of committed memories whose storing transaction failed.
	unstored *fetchedVectors
}

// fetchedVectors are the vectors found for the memories of one batch.
type fetchedVectors struct {
	model string
	mems  []*memory.Memory     // those the index lacked
	all   map[string][]float32 // by content hash, cached or new
	fresh map[string][]float32 // those the provider returned, to store
	err   error
}

// start fetches the vectors of the memories a batch created, in the background.
func (b *bulkEmbed) start(ctx context.Context, created []*memory.Memory) {
	e, need := b.db.vectors.needVectors(created)
	if len(need) == 0 || b.failed || b.db.recall.down(b.db.Now()) {
		return
	}
	ch := make(chan fetchedVectors, 1)
	b.pending = ch
	timeout := b.db.EmbedTimeout
	go func() {
		all, fresh, err := b.db.vectors.fetchVectors(ctx, e, embedItems(need), timeout)
		ch <- fetchedVectors{model: e.model, mems: need, all: all, fresh: fresh, err: err}
	}()
}

// wait returns the vectors being fetched, if any, noting a failed call.
func (b *bulkEmbed) wait() *fetchedVectors {
	if b.pending == nil {
		return nil
	}
	f := <-b.pending
	b.pending = nil
	if f.err != nil {
		b.failed = true
		b.db.recall.noteBulkEmbedError(b.db.Now(), f.err)
	}
	return &f
}

// storeTx stores the new vectors of f inside tx; nil f stores nothing.
func (b *bulkEmbed) storeTx(ctx context.Context, tx *txn, f *fetchedVectors) error {
	if f == nil {
		return nil
	}
	return b.db.vectors.storeVectorsTx(ctx, tx, f.model, f.fresh)
}

// index puts the memories of f in the vector index, once their vectors are stored.
func (b *bulkEmbed) index(f *fetchedVectors) {
	if f != nil {
		b.db.vectors.upsertVectors(f.mems, f.all)
	}
}

// finish stores and indexes the vectors still being fetched, in a transaction of their
// own: after the last batch, or when a batch failed (its predecessors are committed, and
// their vectors are worth keeping).
func (b *bulkEmbed) finish(ctx context.Context) {
	f := b.unstored
	if f == nil {
		f = b.wait()
	}
	if f == nil {
		return
	}
	if err := b.db.vectors.storeVectors(context.WithoutCancel(ctx), f.model, f.fresh); err != nil {
		b.db.recall.noteBulkEmbedError(b.db.Now(), err)
		return
	}
	b.index(f)
}
