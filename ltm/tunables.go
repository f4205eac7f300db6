package ltm

import (
	"time"

	"github.com/kioku-bot/kioku/internal/kwindex"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Tunables are a store's settings. Every aggregate of a Store reads the same ones, so
// setting one on the Store sets it for all of them.
type Tunables struct {
	// Now returns the current time; tests replace it to move through retention windows.
	Now func() time.Time
	// RecoverWindow is how long after forget a memory can be recovered.
	RecoverWindow time.Duration
	// ConfirmTTL is how long a preview token for a destructive action stays valid.
	ConfirmTTL time.Duration
	// EmbedTimeout bounds the best-effort embedding after a write; default
	// DefaultEmbedTimeout.
	EmbedTimeout time.Duration
	// QueryEmbedTimeout bounds embedding a recall query before recall falls back to
	// keywords; default DefaultQueryEmbedTimeout.
	QueryEmbedTimeout time.Duration
	// EmbedRetryAfter is how long embedding is skipped after a provider failure; default
	// DefaultEmbedRetryAfter.
	EmbedRetryAfter time.Duration
	// Alpha weighs the vector leg against the keyword leg when both score (SPEC §5);
	// default DefaultAlpha.
	Alpha float64
	// Dampen switches recall's post-fusion dampening stages; default
	// recall.DefaultDampening (docs/recall.md).
	Dampen recall.Dampening
	// Stages weighs recall's conversation-aware ranking stages; default DefaultStages
	// (docs/recall.md).
	Stages recall.Stages
	// GraphDeadline bounds the knowledge-graph queries of one recall (graph boost, hub);
	// past it recall ranks without the graph. Zero or less skips the graph. Default
	// DefaultGraphDeadline.
	GraphDeadline time.Duration
	// QuantizedCosines makes recall score vector candidates with the index's int8 cosines
	// (off by default). By default they are re-scored with their float32 vectors read from
	// the database, which keeps rankings exactly as with float32 vectors but costs two small
	// queries per recall (about 2 ms each at 20,000 memories); the int8 cosines differ by
	// about 0.001 at 384 dimensions, more at small widths (docs/recall.md).
	QuantizedCosines bool
	// AccessFlushInterval is how often access counts gathered by recall are written; it
	// is read once by OpenEngine, so it can't be changed later. Default
	// DefaultAccessFlushInterval.
	AccessFlushInterval time.Duration
	// VectorWriteDelay is how long a vector fetched for a new memory waits for others to
	// be stored with (vectorwrite.go); set it before the first write. Default
	// DefaultVectorWriteDelay.
	VectorWriteDelay time.Duration
	// IndexWriteDelay is how long a single write's memory waits for others to enter the
	// full-text indexes with, on an engine that indexes single writes later
	// (DeferredIndexing: SQLite's); zero or less indexes each in its own write. Set it
	// before the first write. Default DefaultIndexWriteDelay.
	IndexWriteDelay time.Duration
	// MaxServerMemories and MaxMemberMemories cap the live memories of one server and of
	// one member's personal memory (caps.go); zero means DefaultMaxServerMemories and
	// DefaultMaxMemberMemories, negative no cap.
	MaxServerMemories int
	MaxMemberMemories int
	// KeywordParams are the BM25 parameters of the in-memory keyword index (keywordindex.go);
	// a scope's index reads them when it is built. Default kwindex.DefaultParams.
	KeywordParams kwindex.Params
	// KeywordSyncBuild is the largest scope whose keyword index is built inside the query
	// that first needs it; larger scopes build in the background while the engine's
	// full-text search answers (KeywordFallback). Zero or less builds every scope in the
	// background. Default DefaultKeywordSyncBuild.
	KeywordSyncBuild int
	// KeywordIndexMax bounds the memories all keyword indexes hold together; past it the
	// least recently searched scopes are dropped. Default DefaultKeywordIndexMax.
	KeywordIndexMax int
	// KeywordIndexOff answers every keyword query from the engine's full-text search
	// (KeywordFallback: SQLite's FTS5), for comparisons: the eval and bench baselines.
	KeywordIndexOff bool
}

// DefaultIndexWriteDelay is how long a single write's memory waits for others to be
// indexed with (Tunables.IndexWriteDelay).
const DefaultIndexWriteDelay = 50 * time.Millisecond

// DefaultTunables returns the settings a store opens with.
func DefaultTunables() *Tunables {
	return &Tunables{
		Now:                 time.Now,
		RecoverWindow:       DefaultRecoverWindow,
		ConfirmTTL:          DefaultConfirmTTL,
		EmbedTimeout:        DefaultEmbedTimeout,
		QueryEmbedTimeout:   DefaultQueryEmbedTimeout,
		EmbedRetryAfter:     DefaultEmbedRetryAfter,
		Alpha:               DefaultAlpha,
		Dampen:              recall.DefaultDampening,
		Stages:              DefaultStages,
		GraphDeadline:       DefaultGraphDeadline,
		AccessFlushInterval: DefaultAccessFlushInterval,
		VectorWriteDelay:    DefaultVectorWriteDelay,
		IndexWriteDelay:     DefaultIndexWriteDelay,
		KeywordParams:       kwindex.DefaultParams,
		KeywordSyncBuild:    DefaultKeywordSyncBuild,
		KeywordIndexMax:     DefaultKeywordIndexMax,
	}
}
