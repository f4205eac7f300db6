package memory

import (
	"fmt"
	"time"
)

// EmbedTrackOptions bound one run of the embedding tracker, which gives live memories the
// vector of the configured embedding model for their current content.
type EmbedTrackOptions struct {
	// Batch is how many memories one embedding call carries; zero or less means the
	// store's default.
	Batch int
	// MaxCalls is how many embedding calls one run makes at most, so a run never holds
	// the provider long; zero or less means no limit (fill every gap now).
	MaxCalls int
	// CallTimeout bounds one embedding call; zero or less means the store's default.
	CallTimeout time.Duration
}

// EmbedTrackResult says what one run of the embedding tracker did.
type EmbedTrackResult struct {
	// Loaded counts stored vectors put into the in-memory index without asking the
	// provider: every live memory's on the first run of a process (or after the model
	// changed), afterwards those of memories another process wrote or edited.
	Loaded int `json:"loaded"`
	// Embedded counts memories that got their first vector.
	Embedded int `json:"embedded"`
	// Refreshed counts memories whose vector was stale: their content was edited since
	// they were written, or they had a vector of another model only.
	Refreshed int `json:"refreshed"`
	// Missing counts live memories still without a vector of the model for their
	// content after the run.
	Missing int `json:"missing"`
	// Calls counts embedding calls made.
	Calls int `json:"calls"`
	// Deferred counts memories left for a later run because the daily model budget or the
	// embedding rate of their server (or member, for DM memories) was spent; they are in
	// Missing too.
	Deferred int `json:"deferred,omitempty"`
	// Skipped, when not empty, says why the run stopped before filling what it could: the
	// provider failed or timed out, or it is marked down after a recent failure.
	Skipped string `json:"skipped,omitempty"`
}

// String is the one-line summary kept as the run's detail: counts only, never content.
func (r EmbedTrackResult) String() string {
	s := fmt.Sprintf("embedded=%d refreshed=%d missing=%d calls=%d loaded=%d",
		r.Embedded, r.Refreshed, r.Missing, r.Calls, r.Loaded)
	if r.Deferred > 0 {
		s += fmt.Sprintf(" deferred=%d", r.Deferred)
	}
	if r.Skipped != "" {
		s = "skipped: " + r.Skipped + "; " + s
	}
	return s
}

// EmbedStatus describes the embedding side of recall for diagnostics.
type EmbedStatus struct {
	// Model is the configured embedding model; empty means keyword recall only.
	Model string
	// Vectors is how many live memories are in the in-memory vector index: those of the
	// scopes resident now (loaded on first recall, evicted past KIOKU_VECTOR_CACHE_MB).
	Vectors int
	// Down is true while embedding is skipped after a provider failure.
	Down bool
	// LastError is the most recent embedding failure and when it happened.
	LastError   string
	LastErrorAt time.Time
	// LastImportError is the most recent failure of a bulk write's embedding calls (an
	// import, RememberMany) and when it happened. It does not make Down true: the
	// memories it left without vectors wait for the embedding tracker.
	LastImportError   string
	LastImportErrorAt time.Time
}

// EmbedCoverage counts live memories and those with a stored vector of one model for their
// current content.
type EmbedCoverage struct {
	Model    string `json:"model"`
	Live     int    `json:"live"`
	Embedded int    `json:"embedded"`
}
