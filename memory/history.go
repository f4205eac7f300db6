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
	// OldOrigin and NewOrigin are where OldContent and NewContent were said. They differ
	// when a change moved the memory, and a row may quote another memory or a proposal's
	// words from elsewhere. nil is unknown (rows written before origins were recorded). A
	// pipeline deletion's row has no new text; its NewOrigin is where the deletion was
	// decided, which its reason speaks of.
	OldOrigin *Origin `json:"old_origin,omitempty"`
	NewOrigin *Origin `json:"new_origin,omitempty"`
}

// Origin is where a text was said: the guild ("" for a DM) and channel ("" when none was
// recorded) of the memory or conversation it came from.
type Origin struct {
	GuildID   string `json:"guild_id,omitempty"`
	ChannelID string `json:"channel_id,omitempty"`
}

// OriginOf is the origin of m's content: the guild and channel it was learned in.
func OriginOf(m *Memory) *Origin {
	return &Origin{GuildID: m.GuildID, ChannelID: m.Provenance.ChannelID}
}

// ShownTo returns the row as a view under audience a may show it, and whether its text was
// withheld. Each text it carries must come from an origin a allows (AllowsText); when one
// does not, the row keeps what it did (action, version, actor, time) and loses its text and
// its reason, which may quote the same words.
func (ev HistoryEvent) ShownTo(a *Audience) (HistoryEvent, bool) {
	if shownSide(a, ev.OldContent, ev.OldOrigin) && shownSide(a, ev.NewContent, ev.NewOrigin) {
		return ev, false
	}
	ev.OldContent, ev.NewContent, ev.Reason = "", "", ""
	return ev, true
}

// shownSide reports whether one side of a row may be shown: a side with no text is, unless
// it records an origin the audience does not allow (a decision's reason spoke of it).
func shownSide(a *Audience, text string, o *Origin) bool {
	if text == "" && o == nil {
		return true
	}
	return a.AllowsText(o)
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
// changed after the change it would revert, and of a change made with Change.IfVersion
// from a view older than the memory; the edges point people at the history.
var ErrChangedSince = errors.New("memory changed since")

// StateChange reads the lifecycle state an update row moved its memory from and to, and
// the memory the new state names; ok is false for a row that changed no state.
func (ev HistoryEvent) StateChange() (from, to State, ref int64, ok bool) {
	if ev.Action != ActionUpdate || len(ev.Metadata) == 0 {
		return "", "", 0, false
	}
	var meta struct {
		State    []State `json:"state"`
		StateRef []int64 `json:"state_ref"`
	}
	if json.Unmarshal(ev.Metadata, &meta) != nil || len(meta.State) != 2 {
		return "", "", 0, false
	}
	if len(meta.StateRef) == 2 {
		ref = meta.StateRef[1]
	}
	return meta.State[0], meta.State[1], ref, true
}

// Lifecycle is the lifecycle a stored state stands for, past aside: "" is active.
func (s State) Lifecycle() Lifecycle {
	if s == StateActive {
		return LifecycleActive
	}
	return Lifecycle(s)
}
