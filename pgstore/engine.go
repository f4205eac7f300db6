package pgstore

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// engine is PostgreSQL as the long-term memory service sees it (ltm.Engine): numbered
// placeholders, advisory locks for the checks that must not interleave, row locks that
// skip what another writer holds, jsonb for JSON text. It tells the store's own recall
// state (embed.go) what the service's writes changed (ltm.RecallIndexer).
type engine struct{ d *db }

var (
	_ ltm.Engine        = engine{}
	_ ltm.RecallIndexer = engine{}
)

func (engine) Name() string               { return "postgres" }
func (engine) Rebind(query string) string { return rebind(query) }
func (engine) Dialect() *ltm.Dialect      { return &dialect }
func (engine) StorageError(err error) error {
	return storageError(err)
}

// MemoriesCreated puts the memories the service just wrote in this process's vector index
// (fetching their vectors) and has the planner's statistics follow the table's growth, as
// this package's own writes do.
func (e engine) MemoriesCreated(ctx context.Context, mems []*memory.Memory) {
	if len(mems) == 0 {
		return
	}
	e.d.recall.indexMemories(ctx, mems...)
	e.d.keepPlannerStats(ctx, mems...)
}

// IndexMemories and UnindexMemories keep this store's recall current with what the
// service wrote, as its own writes do.
func (e engine) IndexMemories(ctx context.Context, mems ...*memory.Memory) {
	e.d.recall.indexMemories(ctx, mems...)
}

func (e engine) UnindexMemories(mems ...*memory.Memory) { e.d.recall.unindexMemories(mems...) }

// LockKey takes a transaction-scoped advisory lock on key: PostgreSQL lets several writers
// in at once (several processes, or several goroutines of one), and a check followed by a
// write (is this content in the scope already? is this job queued?) must not interleave
// with another's.
func (engine) LockKey(ctx context.Context, tx ltm.Execer, key string) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
		return fmt.Errorf("couldn't lock %s: %w", key, err)
	}
	return nil
}

// dialect is PostgreSQL's SQL for what the engines spell differently. Job payloads are
// stored as the text the worker wrote (the queue hands back exactly what it was given) and
// read as jsonb where a statement looks inside.
var dialect = ltm.Dialect{
	SkipLocked: " FOR UPDATE SKIP LOCKED",
	JSONText: func(column, key string) string {
		return `(` + column + `::jsonb ->> '` + key + `')`
	},
	JobIDsPayload:        jobIDsPayload,
	JobHasCheckpoint:     jobHasCheckpoint,
	JobWithoutCheckpoint: `(payload::jsonb - 'checkpoint')::text`,
	JSONArrayTexts:       `json_array_elements_text(?)`,
	JSONArrayValues:      `json_array_elements(?)`,
	FullSearchText:       true,
}

// jobIDsJSON is the SQL expression of a job's payload reduced to its ids, as jsonb: the
// guild and channel, where the payload names them (a null or missing one is dropped), else
// nothing. jobIDsPayload is the same as stored text.
const (
	jobIDsJSON = `(CASE WHEN jsonb_typeof(payload::jsonb) = 'object' THEN jsonb_strip_nulls(jsonb_build_object(
	'guild_id', payload::jsonb -> 'guild_id', 'channel_id', payload::jsonb -> 'channel_id')) ELSE '{}'::jsonb END)`
	jobIDsPayload = jobIDsJSON + `::text`
)

// jobHasCheckpoint is the SQL condition of a job payload that holds a checkpoint.
const jobHasCheckpoint = `(jsonb_typeof(payload::jsonb) = 'object' AND payload::jsonb -> 'checkpoint' IS NOT NULL)`
