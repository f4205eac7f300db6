// Package maintenance is the pure half of kioku's health and self-repair (SPEC §4
// "Maintenance", §7 doctor): it turns what the store reports about itself (Diagnostics) into
// per-domain scores, a composite score and findings that name the command fixing each
// (Assess), and decides which repairs may run now (Policy: cooldowns, hourly budgets, the
// halt after repairs that do not help). It does no I/O and reads no clock of its own; the
// store gathers the diagnostics, internal/pipeline runs the repairs and `kioku doctor` and
// /kioku status show the report.
package maintenance

import (
	"time"
)

// Diagnostics is what the store and the process report about their health at one moment.
// Every number is a count or a size; nothing quotes what people wrote.
type Diagnostics struct {
	// At is when the diagnostics were read.
	At        time.Time `json:"at"`
	Queue     Queue     `json:"queue"`
	Storage   Storage   `json:"storage"`
	Index     Index     `json:"index"`
	Provider  Provider  `json:"provider"`
	Mutations Mutations `json:"mutations"`
	// Repairs is what the self-repair audit says about its latest runs.
	Repairs RepairState `json:"repairs"`
}

// Queue describes the background job queue.
type Queue struct {
	// Depth is the jobs not finished yet (queued and leased); Due the queued ones that may
	// run now.
	Depth int `json:"depth"`
	Due   int `json:"due"`
	// Stale counts leased jobs whose lease expired and that no reaper has taken back.
	Stale int `json:"stale"`
	// Dead counts dead-lettered jobs still kept; Requeueable those self-repair may still
	// give one more chance (it requeues each dead job at most once); NewestDead is the id
	// of the newest dead job, for the fix command.
	Dead        int   `json:"dead"`
	Requeueable int   `json:"requeueable"`
	NewestDead  int64 `json:"newest_dead,omitempty"`
	// DeadRecent and FinishedRecent count the jobs that died, and that finished either
	// way, within Window before At.
	DeadRecent     int           `json:"dead_recent"`
	FinishedRecent int           `json:"finished_recent"`
	Window         time.Duration `json:"window_ns"`
	// OldestDue is when the longest-waiting due job became due; zero when none is due.
	OldestDue time.Time `json:"oldest_due,omitzero"`
}

// Storage describes the database file and its soft-deleted rows.
type Storage struct {
	// Live and Forgotten count memories; ExpiredTombstones the forgotten ones older than
	// the recover window, which retention should already have purged.
	Live              int `json:"live"`
	Forgotten         int `json:"forgotten"`
	ExpiredTombstones int `json:"expired_tombstones"`
	// FileBytes is the size of the database file; FreeBytes the part of it in free pages
	// (freelist_count × page_size), which only a vacuum gives back.
	FileBytes int64 `json:"file_bytes"`
	FreeBytes int64 `json:"free_bytes"`
	// AutoVacuum is SQLite's auto_vacuum mode: "none", "full" or "incremental".
	AutoVacuum string `json:"auto_vacuum"`
	// PendingMigrations are the migrations this binary knows that the database lacks.
	PendingMigrations []string `json:"pending_migrations,omitempty"`
}

// Index describes the full-text indexes and the embeddings.
type Index struct {
	// Live counts live memories: what every index should hold exactly.
	Live int `json:"live"`
	// Words and Trigrams compare the word and trigram full-text indexes with the live
	// memories.
	Words    IndexSync `json:"words"`
	Trigrams IndexSync `json:"trigrams"`
	// EmbedModel is the configured embedding model; empty means keyword-only recall and
	// the embedding fields below are not read.
	EmbedModel string `json:"embed_model,omitempty"`
	// Embedded counts live memories with a vector of EmbedModel.
	Embedded int `json:"embedded"`
	// Vectors counts stored vectors of any model; Stale those for a content hash no live
	// memory has, or of another model than EmbedModel.
	Vectors int `json:"vectors"`
	Stale   int `json:"stale"`
}

// IndexSync compares one full-text index with the live memories.
type IndexSync struct {
	// Table is the index's name in the schema.
	Table string `json:"table"`
	// Rows counts the index's entries; Missing the live memories without one; Extra the
	// entries of rows that are forgotten or gone.
	Rows    int `json:"rows"`
	Missing int `json:"missing"`
	Extra   int `json:"extra"`
}

// OutOfSync is the number of entries the index has wrong.
func (s IndexSync) OutOfSync() int { return s.Missing + s.Extra }

// Provider describes the model provider as this process saw it recently. Only the process
// that calls the provider knows; elsewhere (`kioku doctor`) Known is false.
type Provider struct {
	Known bool `json:"known"`
	// Window is how far back Calls and Errors reach.
	Window time.Duration `json:"window_ns,omitempty"`
	// Calls counts attempts sent to the provider (chat and embeddings, retries included);
	// Errors those that failed.
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// EmbedModel is the embedding model in use; EmbedDown is true while embedding is
	// skipped after a provider failure, since EmbedFailedAt.
	EmbedModel    string    `json:"embed_model,omitempty"`
	EmbedDown     bool      `json:"embed_down"`
	EmbedFailedAt time.Time `json:"embed_failed_at,omitzero"`
}

// SuccessRate is the share of calls that succeeded, 1 when there were none.
func (p Provider) SuccessRate() float64 {
	if p.Calls <= 0 {
		return 1
	}
	return 1 - float64(min(p.Errors, p.Calls))/float64(p.Calls)
}

// Mutations describes recent changes to memory that may need a person's eyes.
type Mutations struct {
	// Window is how far back the counts reach.
	Window time.Duration `json:"window_ns"`
	// Recoveries counts forgotten memories brought back; Deletes memories forgotten.
	Recoveries int `json:"recoveries"`
	Deletes    int `json:"deletes"`
	// Blocked counts pipeline proposals refused by policy; Proposals every pipeline
	// proposal recorded (applied or not).
	Blocked   int `json:"blocked"`
	Proposals int `json:"proposals"`
	// Reviews counts contradictions recorded as review_needed.
	Reviews int `json:"reviews"`
	// NewestReview and NewestBlocked point at the latest of each, for the fix command.
	NewestReview  MemoryRef `json:"newest_review,omitzero"`
	NewestBlocked MemoryRef `json:"newest_blocked,omitzero"`
}

// MemoryRef names one memory by id and scope key ("g:<guild>" or "u:<user>").
type MemoryRef struct {
	ID       int64  `json:"id"`
	ScopeKey string `json:"scope_key"`
}

// RepairState is what the audit of self-repair says about its latest run.
type RepairState struct {
	// LastRunAt is the latest run that recorded anything; zero when none did.
	LastRunAt time.Time `json:"last_run_at,omitzero"`
	// Halted is true when that run found repairs to do and was halted from doing them.
	Halted bool `json:"halted"`
}
