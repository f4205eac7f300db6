package memory

import (
	"encoding/json"
	"errors"
	"time"
)

// Action names what a history row records.
type Action string

// History actions. Every mutation writes one row; pipeline proposals that were not applied
// write one too, so the audit shows what the bot considered as well as what it did.
const (
	ActionCreate  Action = "create"
	ActionUpdate  Action = "update"
	ActionDelete  Action = "delete"
	ActionRecover Action = "recover"
	ActionImport  Action = "import"
	ActionPurge   Action = "purge"   // hard delete after retention
	ActionDedup   Action = "deduped" // a write matched an existing memory
	ActionSkip    Action = "skipped" // a proposal rejected by a gate
	ActionBlock   Action = "blocked" // a proposal refused by policy (pinned, privacy, frozen)
	ActionShadow  Action = "shadow"  // a proposal recorded in shadow mode only
	ActionReview  Action = "review_needed"
)

// HistoryEvent is one memory_history row.
type HistoryEvent struct {
	ID         int64           `json:"id"`
	MemoryID   int64           `json:"memory_id,omitempty"`
	ScopeKey   string          `json:"scope_key"`
	Action     Action          `json:"action"`
	OldContent string          `json:"old_content,omitempty"`
	NewContent string          `json:"new_content,omitempty"`
	Version    int             `json:"version,omitempty"`
	Actor      Actor           `json:"actor"`
	Reason     string          `json:"reason,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
}

// Undone says what an undo did.
type Undone struct {
	// Change is the history row of the change that was reverted.
	Change HistoryEvent `json:"change"`
	// Action is what the undo did: ActionRecover brought back a forgotten memory,
	// ActionUpdate restored an edited one, ActionDelete forgot a created (or recovered) one.
	Action Action `json:"action"`
	// Memory is the memory as the undo left it.
	Memory *Memory `json:"memory"`
}

// ErrChangedSince is in the chain of the error of an undo refused because the memory
// changed after the change it would revert; the edges point people at the history.
var ErrChangedSince = errors.New("memory changed since")
