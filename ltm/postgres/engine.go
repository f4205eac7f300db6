package postgres

import (
	"context"
	"fmt"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// engine is PostgreSQL as the long-term memory service sees it (ltm.Engine): numbered
// placeholders, advisory locks for the checks that must not interleave, row locks that
// skip what another writer holds, jsonb for JSON text, and the database's own full-text
// search while the in-memory keyword indexes can't answer (keywordfallback.go). d is the
// store it serves.
//
// Its maintenance (upkeep.go) reads and writes through d too, and the change feed's memory
// notices (d.notices) are the log the keyword indexes follow.
type engine struct{ d *db }

var (
	_ ltm.Engine          = engine{}
	_ ltm.KeywordFallback = engine{}
)

func (engine) Name() string               { return "postgres" }
func (engine) Rebind(query string) string { return rebind(query) }
func (engine) Dialect() *ltm.Dialect      { return &dialect }

// Changes is the change feed's memory notices (keywords.go): a write of another process
// reaches this one's keyword indexes by notice, as it reaches its vector index.
func (e engine) Changes() ltm.ChangeLog { return e.d.notices }

// Committed counts a write transaction of the service that committed, so the next keyword
// query waits for its notices.
func (e engine) Committed() { e.d.notices.committed() }

func (engine) StorageError(err error) error {
	return storageError(err)
}

// Written keeps the planner's statistics of memories current as the table grows.
func (e engine) Written(ctx context.Context, changed, _ []*memory.Memory) {
	if len(changed) > 0 {
		e.d.keepPlannerStats(ctx, changed...)
	}
}

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
	LockRows:   " FOR UPDATE",
	JSONText: func(column, key string) string {
		return `(` + column + `::jsonb ->> '` + key + `')`
	},
	JobIDsPayload:        jobIDsPayload,
	JobHasCheckpoint:     jobHasCheckpoint,
	JobWithoutCheckpoint: `(payload::jsonb - 'checkpoint')::text`,
	JSONArrayTexts:       `json_array_elements_text(?)`,
	JSONArrayValues:      `json_array_elements(?)`,
	// The generated word index reads the search text whatever it is (0001_schema.sql).
	SearchText: memory.SearchText,
	Greatest:   "greatest",
	Instr:      "strpos",
	TagsHold: func(column string) string {
		return `EXISTS (SELECT 1 FROM jsonb_array_elements_text(` + column + `::jsonb) t WHERE t = ?)`
	},
	// The planner sees the pinned rows' partial index (memories_pinned_live) from the
	// written-out condition.
	PinnedLiveMemories: "memories",
	JSONMerge: func(column string) string {
		return `(` + column + `::jsonb || ?::jsonb)::text`
	},
	LockRow: " FOR UPDATE",
	// A text match is cheaper than a cast to jsonb, which would also fail on the empty
	// metadata of rows without any.
	JSONMayHold: func(column, key string) string {
		return column + ` LIKE '%"` + key + `"%'`
	},
	JSONArrayAt: func(column, key string) string {
		return `jsonb_array_elements(` + column + `::jsonb -> '` + key + `')`
	},
	JSONValueText: func(value, key string) string {
		return `(` + value + ` ->> '` + key + `')`
	},
	JSONAgg: func(value string) string { return `coalesce(jsonb_agg(` + value + `), '[]'::jsonb)` },
	JSONSet: func(column, key, value string) string {
		return `jsonb_set(` + column + `::jsonb, '{` + key + `}', ` + value + `)::text`
	},
	// Compared as jsonb: a payload's text need not be jsonb's spelling of the same ids.
	JobBeyondIDs: `payload::jsonb <> ` + jobIDsJSON,
	// The word vectors are columns of the deleted rows and go with them (PostgreSQL's files
	// keep dead row versions until VACUUM: docs/postgres.md).
	PurgeSearch: "",
	// Several processes write: none keeps what a stop would lose or the others need.
	SharedByProcesses: true,
	ByKey:             "memories m",
	DriverPrepares:    true,
	// A round trip over the network costs more than the rest of a candidate's row.
	WholeCandidates: true,
	// An array the planner sees as one value is looked up in the primary key; a join with
	// the rows of a JSON function may read the whole scope instead.
	IDsIn: func(column string) string {
		return column + ` = ANY(ARRAY(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(?)))`
	},
	// The planner keeps statistics (plannerstats.go) and picks its indexes itself.
	Index: func(table, _ string) string { return table },
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
