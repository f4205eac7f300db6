package memory

import "time"

// The shapes of a write as the store's callers give them: who writes where, what a change
// sets, which page of a listing they want, and what a write did.

// WriteContext says who is writing and where, for writes whose outcome a member sees (a
// tool result, a notice, a command reply). SPEC §2: the result a writer sees never depends
// on memories that writer may not see in that place, so such a write deduplicates only
// against memories the writer can see there (CanSee) and otherwise inserts a fresh row by
// the same path and with the same statements as any new memory.
//
// Writers without a place (the operator CLI, eval, bench, the pipeline) use the store's
// plain writes (Remember, Modify, Recover, Import), which deduplicate against the whole scope.
type WriteContext struct {
	// WriterID is the member who writes (the speaker of a chat turn, the user of a command).
	WriterID string
	// GuildID is the guild the write happens in; "" for a DM.
	GuildID string
	// ChannelID is the channel the write happens in.
	ChannelID string
	// Audience is the channel rule of the place; nil restricts nothing beyond scope.
	Audience *Audience
}

// CanSee reports whether the writer may see the existing memory m in this place, given the
// writer's cross-server opt-in:
//   - a server memory of this guild that the audience allows;
//   - the writer's own personal memory that the scope rules allow here (in a DM all of it;
//     in a guild the memories that originated there, or all when the writer opted into
//     cross-server use) and the audience allows;
//   - another member's personal memory only when the writer authored it (and the audience
//     allows it).
//
// Anything else, another member's own memories above all, is invisible: a write never
// learns that it exists.
func (w WriteContext) CanSee(m *Memory, crossServer bool) bool {
	if m == nil || m.Deleted() || w.WriterID == "" || !w.Audience.Allows(m) {
		return false
	}
	switch m.Scope {
	case ScopeServer:
		return w.GuildID != "" && m.GuildID == w.GuildID
	case ScopePersonal:
		if m.UserID == w.WriterID {
			return w.GuildID == "" || m.GuildID == w.GuildID || crossServer
		}
		return m.Provenance.AuthorID == w.WriterID
	}
	return false
}

// WriteResult reports the outcome of remembering a memory.
type WriteResult struct {
	Memory *Memory
	// Created is false when an identical live memory already existed in the scope; Memory
	// is then that existing memory.
	Created bool
}

// ListOptions filters and pages a listing of memories.
// MaxListLimit is the most memories one List call returns: a bulk action's batch (the web
// dashboard's) in one read, rather than a count and a scan per page of it.
const MaxListLimit = 5000

type ListOptions struct {
	Limit  int // default 20, at most MaxListLimit
	Offset int
	Type   Type
	Tag    string
	Pinned *bool
	// Deleted lists forgotten memories (still recoverable) instead of live ones.
	Deleted bool
	// GuildID narrows a personal listing to memories that originated in one guild.
	GuildID string
	// AuthorID narrows the listing to memories whose provenance names this author.
	AuthorID string
	// ChannelID narrows the listing to memories learned in this channel.
	ChannelID string
	// Since and Until keep memories created at or after Since and at or before Until, as
	// SearchQuery's do; zero leaves that end open.
	Since, Until time.Time
	// Contains narrows the listing to memories whose content contains these words
	// (case-insensitive for ASCII), for completing a memory id as a member types.
	Contains string
	// Audience, when set, lists only memories whose origin channel it allows.
	Audience *Audience
	// Timing lists only time-bound memories whose span is still to come (soonest first)
	// or has passed (latest first), at Now; "" lists all, newest first.
	Timing Timing
	// Lifecycle lists only memories in that lifecycle at Now. "" lists every memory except
	// the shelved ones (superseded and archived), as default search does.
	Lifecycle Lifecycle
	// Now is the time Timing and Lifecycle are read at; zero is the store's clock.
	Now time.Time
}

// Change lists the fields a modification may set; nil fields are left as they are.
type Change struct {
	Content    *string
	Type       *Type
	Importance *float64
	Pinned     *bool
	Tags       *[]string
	// ChannelID, when set, moves the memory's origin channel: new content said in a channel
	// may only be used where that channel's words may (SPEC §2 "Channel-aware memory").
	ChannelID *string
	// GuildID, when set, moves a personal memory's origin guild ("" for a DM) with its
	// channel: new content said in a DM may only be used where that DM's words may. Server
	// memory belongs to its guild and cannot move.
	GuildID *string
	// State, when set, moves the memory to that lifecycle state, naming StateRef (0 when
	// the state names no memory; a superseded or disputed memory must name a live memory
	// of its scope). A memory is superseded only by one whose every reader may see it
	// (Memory.SeenByAllWhoSee), and disputed only with one of which that holds either way.
	State    *State
	StateRef int64
	// IfVersion, when non-zero, makes the change apply only if the memory is still at that
	// version (optimistic concurrency for edits made from a stale view).
	IfVersion int
	Reason    string
}

// HeldWrite is a save that waits for its writer's decision: a near-duplicate answer holds
// it until they keep both memories, let it replace the one it repeats, or merge the two.
type HeldWrite struct {
	Memory Memory
	// Evidence are the messages the memory was saved from ("Remember this").
	Evidence []MessageRef
}
