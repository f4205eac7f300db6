package memory

import "time"

// What forget-by-query and forget-me show and record.

// ForgetMeSummary counts what forget-me erases (PreviewForgetMe) or erased
// (ConfirmForgetMe). Each memory is counted once, under the first category it falls in.
type ForgetMeSummary struct {
	Token string // set by PreviewForgetMe; ConfirmForgetMe needs it
	// Memories counts the member's personal memories, live and forgotten.
	Memories int
	// About counts other memories whose subject is the member (a server fact about them,
	// another member's Remember-this copy of their message).
	About int
	// FromMessages counts other memories learned only from the member's messages.
	FromMessages int
	// Anonymised counts memories the member authored that stay (server knowledge) but lose
	// the member's id and name.
	Anonymised int
	// Turns counts transcript turns: the member's messages and the bot's replies to them.
	Turns int
	// Jobs counts pipeline jobs whose checkpoint or finished content was cleared.
	Jobs      int
	ExpiresAt time.Time
}

// ForgetPreview is what forget-by-query shows before anything is deleted. Only its Token
// executes the deletion, and only of exactly these memories.
type ForgetPreview struct {
	Token     string
	Matches   []*Memory
	ExpiresAt time.Time
}

// ForgetFence is one member's forget-me as its fence records it: who, and when.
type ForgetFence struct {
	UserID      string
	ForgottenAt time.Time
}
