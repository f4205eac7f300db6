package memory

import (
	"errors"
	"time"
)

// ProposalAction is what the pipeline's decision stage proposes for one fact.
type ProposalAction string

// Proposal actions (SPEC §4 decision stage).
const (
	ProposeAdd    ProposalAction = "ADD"
	ProposeUpdate ProposalAction = "UPDATE"
	ProposeDelete ProposalAction = "DELETE"
	ProposeNone   ProposalAction = "NONE"
	// ProposeSupersede keeps the fact as a new memory and marks TargetID superseded by
	// it: the old statement was true and no longer is (a move, a changed plan).
	ProposeSupersede ProposalAction = "SUPERSEDE"
	// ProposeDispute keeps the fact as a new memory and marks it and TargetID disputed
	// with each other: they conflict and it is unclear which holds.
	ProposeDispute ProposalAction = "DISPUTE"
)

// Replaces reports whether a names a target it keeps as history beside a new memory.
func (a ProposalAction) Replaces() bool { return a == ProposeSupersede || a == ProposeDispute }

// Writes reports whether a writes new content (ADD, UPDATE and the replacing actions).
func (a ProposalAction) Writes() bool { return a == ProposeAdd || a == ProposeUpdate || a.Replaces() }

// Proposal is one decided fact, ready to apply or to record.
type Proposal struct {
	Action ProposalAction
	// Owner is the scope the fact belongs to; every lookup is confined to it.
	Owner Owner
	// Memory is the memory to create for ADD (Source is forced to pipeline). For UPDATE
	// only its Content is used.
	Memory Memory
	// TargetID is the existing memory an UPDATE, DELETE, SUPERSEDE, DISPUTE or NONE
	// refers to.
	TargetID int64
	// Record, when set, records the proposal in history under this action (shadow,
	// skipped, blocked) instead of applying it.
	Record Action
	// Redact keeps the content out of the history row, for proposals about people whose
	// privacy level forbids storing anything personal about them.
	Redact bool
	// Reason is the decision's or the gate's reason, shown in history.
	Reason string
	// Metadata is merged into the history row's metadata (job id, fact index, confidence).
	Metadata map[string]any
	// Contradicts lists live memories of the same scope the new content seems to
	// contradict. An applied ADD or UPDATE records a review_needed row on each of them and
	// on the new content's
	Contradicts []int64
	// Evidence are the transcript messages the fact was learned from. An applied ADD
	// records them in memory_evidence (deleted messages and forget-me follow these links);
	// their speakers are checked against forget-me fences.
	Evidence []MessageRef
	// MayEditServer says that a speaker of the evidence could change the guild's server
	// memory when they spoke. Without it, an UPDATE or DELETE of a server memory applies
	// only when an evidence speaker wrote the target; otherwise it is recorded as
	// review_needed (SPEC §4 full mode: the model changes server memory only on behalf of
	// people who may).
	MayEditServer bool
}

// ProposalOutcome is what ApplyPipelineBatch did with one proposal.
type ProposalOutcome struct {
	// Action is the history action recorded: create, update, delete, or deduped, skipped,
	// blocked, shadow when nothing changed.
	Action Action
	// MemoryID is the memory the row is about (the new or changed memory, the duplicate
	// that already held the content, the target); 0 when there is none.
	MemoryID int64
	// Memory is the memory after an applied change.
	Memory *Memory
	// Others are the memories an applied SUPERSEDE or DISPUTE changed besides Memory:
	// the target, now superseded or disputed.
	Others []*Memory
	// Note says why an applied-looking proposal was not applied ("pinned", "target gone").
	Note string
}

// Applied reports whether the outcome changed a
func (o ProposalOutcome) Applied() bool {
	return o.Action == ActionCreate || o.Action == ActionUpdate || o.Action == ActionDelete
}

// PipelineBatch is everything one extraction run writes.
type PipelineBatch struct {
	// JobID and LeaseOwner, when LeaseOwner is set, make the batch apply only while that
	// lease holds, and complete the job in the same transaction: either the facts, the
	// cursor and the job's completion are all committed, or none is.
	JobID      int64
	LeaseOwner string
	// The channel whose cursor moves from CursorFrom to CursorTo. The batch applies only if
	// the cursor is still at CursorFrom, so the same turns are never extracted twice.
	GuildID    string
	ChannelID  string
	CursorFrom int64
	CursorTo   int64
	Proposals  []Proposal
	// StartedAt is when the work behind the proposals began: when the worker leased the
	// job, or when the run whose checkpoint it reuses did. Every proposal involving a
	// member forgotten at or after it (owner, subject, author or evidence speaker) is
	// dropped without writing anything, not even history. Zero skips the fence (callers
	// that hold no job).
	StartedAt time.Time
}

// MessageRef names a Discord message a memory was learned from and its author, recorded as
// evidence (memory_evidence) so that the author's forget-me and the message's deletion
// can find the
type MessageRef struct {
	// MessageID is the Discord message id, or "turn:<transcript id>" for a turn that has
	// none (the terminal chat), so the link still names its speaker.
	MessageID string
	AuthorID  string
}

// ErrCursorMoved is returned by ApplyPipelineBatch when the channel's extraction cursor is
// no longer where the job started: another run already extracted those turns. The batch
// is dropped; nothing was written.
var ErrCursorMoved = errors.New("extraction cursor moved")
