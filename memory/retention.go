package memory

import (
	"time"
)

// RetentionPolicy says how long each kind of row is kept. Zero fields mean the defaults.
type RetentionPolicy struct {
	History     time.Duration
	DoneJobs    time.Duration
	DeadJobs    time.Duration
	Transcripts time.Duration
	// ArchivePast archives a memory this long after the span its words name has ended
	// (a raid night, a deadline gone by); 0 never archives. Pinned memories stay.
	ArchivePast time.Duration
	Batch       int
	MaxBatches  int
}

// RetentionResult counts the rows one retention run deleted, by step.
type RetentionResult struct {
	// GraphLinks counts links from expired tombstones to the entities they mentioned.
	GraphLinks  int `json:"graph_links"`
	Embeddings  int `json:"embeddings"`
	Tombstones  int `json:"tombstones"`
	History     int `json:"history"`
	DoneJobs    int `json:"done_jobs"`
	DeadJobs    int `json:"dead_jobs"`
	Transcripts int `json:"transcripts"`
	Fences      int `json:"fences"`
	// Entities counts graph entities collected because nothing mentions them any more.
	Entities int `json:"entities"`
	// Changes counts rows of the memory change log (ids only) older than the newest
	// entries the keyword indexes read.
	Changes int `json:"changes"`
	// Archived counts past memories archived (RetentionPolicy.ArchivePast).
	Archived int `json:"archived,omitempty"`
	// Confirmations counts expired previews and held saves deleted.
	Confirmations int `json:"confirmations,omitempty"`
}

// GuildPurge counts the rows one guild's purge deleted.
type GuildPurge struct {
	Memories    int `json:"memories"`
	History     int `json:"history"`
	Evidence    int `json:"evidence"`
	Embeddings  int `json:"embeddings"`
	Transcripts int `json:"transcripts"`
	Jobs        int `json:"jobs"`
	// Graph counts the entities of the guild's graph and the entities of its members'
	// graphs that the purge left unmentioned.
	Graph int `json:"graph"`
	// Settings counts the guild's settings, channel records, extraction cursors and
	// pending confirmations.
	Settings int `json:"settings"`
	// Sessions counts the web dashboard sessions revoked: every member who signed in listing
	// the guild signs in again, and sees nothing of it.
	Sessions int `json:"sessions"`
}
