package memory

import "time"

// The review queue (SPEC: "Memory that stays current"): what waits for a person to decide.
// A pair is two memories that conflict (disputed, or flagged as possibly contradicting) or
// say the same thing in other words (near-duplicates); a proposal is a change the pipeline
// could not make on its own (no right to edit server memory, a target some readers could
// not see).

// ReviewKind says what kind of item waits.
type ReviewKind string

const (
	// ReviewDisputed is a pair of memories in the disputed state.
	ReviewDisputed ReviewKind = "disputed"
	// ReviewConflict is a pair the lexical screen flagged as possibly contradicting.
	ReviewConflict ReviewKind = "conflict"
	// ReviewSimilar is a pair of near-duplicates, both saved (an import).
	ReviewSimilar ReviewKind = "similar"
	// ReviewProposal is a change the pipeline proposed for Memory and could not apply.
	ReviewProposal ReviewKind = "proposal"
)

// ReviewItem is one thing waiting for review.
type ReviewItem struct {
	// Ref names the item for Resolve: "d<memory id>" for a disputed pair, "h<history id>"
	// for an item a review_needed history row records.
	Ref  string     `json:"ref"`
	Kind ReviewKind `json:"kind"`
	// Memory is the item's memory: the older of a pair, a proposal's target.
	Memory *Memory `json:"memory"`
	// Other is the newer of a pair; nil for a proposal.
	Other *Memory `json:"other,omitempty"`
	// Proposed is a proposal's new content ("" for a pair or a proposed deletion).
	Proposed string `json:"proposed,omitempty"`
	// Reason is why it waits (the pipeline's reason, the gate's note).
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ReviewChoice is how a person settles an item.
type ReviewChoice string

const (
	// ReviewKeep keeps what is stored: both memories of a pair, active; a proposal dropped.
	ReviewKeep ReviewChoice = "keep"
	// ReviewReplace lets the newer statement win: the older memory of a pair superseded by
	// the newer; a proposal's content written into its target.
	ReviewReplace ReviewChoice = "replace"
	// ReviewMerge makes one memory of the older id with the text the person confirms; the
	// newer of a pair is forgotten.
	ReviewMerge ReviewChoice = "merge"
	// ReviewForget forgets the newer memory of a pair (the older stays, active), or a
	// proposal's target.
	ReviewForget ReviewChoice = "forget"
)

// Valid reports whether c is a known choice.
func (c ReviewChoice) Valid() bool {
	return c == ReviewKeep || c == ReviewReplace || c == ReviewMerge || c == ReviewForget
}
