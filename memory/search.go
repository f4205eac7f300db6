package memory

import (
	"time"
)

// Visible names one slice of memory a recall may read: an owner's scope, optionally narrowed
// to personal memories that originated in one guild (the rule for using someone's personal
// memory in a guild they have not opted into cross-server use for).
type Visible struct {
	Owner Owner
	// OriginGuildID, for a personal owner, restricts to memories made in that guild. Empty
	// means any origin (DMs, or a user who opted into cross-server use).
	OriginGuildID string
}

// SearchQuery describes one recall.
type SearchQuery struct {
	Text string
	// Owners lists whole scopes to search. Each is put in the SQL WHERE clause.
	Owners []Owner
	// Visible lists narrowed scopes (personal memories by origin). Owners and Visible add up.
	Visible []Visible
	Limit   int // default 10, at most 100
	// MinScore drops results whose final Score is below it (0–1), after the legs are fused
	// and the boosts and dampening applied.
	MinScore float64
	// Filters.
	Types []Type
	Tags  []string
	// ImportanceMin keeps memories whose effective importance (Memory.EffectiveImportance,
	// decayed at the store's clock) is at least this.
	ImportanceMin float64
	// Since and Until keep memories created at or after Since and at or before Until;
	// zero leaves that end open.
	Since      time.Time
	Until      time.Time
	PinnedOnly bool
	// AuthorID keeps memories whose provenance names this author (the user who said or
	// saved them).
	AuthorID string
	// AskedAt is the time the question is asked; relative dates in Text ("last weekend",
	// "two weeks ago") resolve against it. Zero means now. The eval sets it from a dataset
	// question's asked_at, so a question about the past is read as it was asked then.
	AskedAt time.Time
	// KeywordOnly skips the vector leg even when an embedder is configured.
	KeywordOnly bool
	// MatchesOnly keeps only memories a leg matched (the query's words, or its meaning):
	// no neighbour of a match brought in by neighbourhood smoothing and no memory only the
	// knowledge graph links. Searches people read as "memories matching X" set it, and so
	// does forget by query, which must never forget a memory that does not match.
	MatchesOnly bool
	// Audience, when set, keeps only memories whose origin channel it allows (SPEC §2
	// "Channel-aware memory"); it is applied inside every candidate query, before any top k.
	Audience *Audience
	// NowOnly leaves out, for a question about the current state that names no date
	// ("when is the next meetup?", "who leads the raids now?"), the memories whose day has
	// passed: the chat context sets it, so last week's plan is not offered as what happens.
	// Other questions still find past memories, below current ones.
	NowOnly bool
	// Include brings back memories in shelved states (superseded, archived), which chat
	// context and default search leave out.
	Include []State
	// Explain fills each result's Why with the stages that placed it.
	Explain bool
	// CountAccess records the returned memories as accessed (access count + 1, last access
	// now, which resets their importance decay). Only recall that a person asked for sets it:
	// the chat turn's context, the model's search_memories tool and /memory search.
	// Background and operator searches (pipeline candidates, forget previews, eval, bench,
	// the CLI) leave it false, the default, so a search that forgets to decide does not
	// keep memories important.
	CountAccess bool
}

// SearchResult is one recalled memory with its scores.
type SearchResult struct {
	Memory *Memory
	// Score is the final score, higher is better: the blended relevance plus the small
	// tie-breaking signals (see Search).
	Score float64
	// Keyword is the normalized keyword score in [0,1), 0 when the keyword leg missed.
	Keyword float64
	// Vector is the cosine similarity in [-1,1], 0 when the vector leg was off or the
	// memory has no vector.
	Vector float64
	// Why are the ranking stages that scaled its relevance, in the order they ran, with
	// SearchQuery.Explain; every one reads only memories the query may see.
	Why []Factor `json:"why,omitempty"`
}

// Factor is one ranking stage's effect on a result's relevance: it was multiplied by Times
// (recall's Factor* constants name the stages).
type Factor struct {
	Stage string  `json:"stage"`
	Times float64 `json:"times"`
	// By is the id of the match that lent its score, for the conversation stage.
	By int64 `json:"by,omitempty"`
}
