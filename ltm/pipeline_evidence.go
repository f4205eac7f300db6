package ltm

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// The pipeline's rules that do not depend on the database: who may change server memory,
// and what the history rows of its decisions say. Every store applies them, so that a
// batch is recorded alike on SQLite and PostgreSQL.

// NoteNeedsEditor is the note of a server-memory UPDATE or DELETE recorded as review_needed
// because nobody whose messages proposed it may change server memory or wrote the target.
const NoteNeedsEditor = "needs a member with the server-memory permission or the memory's author"

// AuthoredByEvidence reports whether one of the evidence speakers wrote m.
func AuthoredByEvidence(m *memory.Memory, evidence []memory.MessageRef) bool {
	if m.Provenance.AuthorID == "" {
		return false
	}
	for _, e := range evidence {
		if e.AuthorID == m.Provenance.AuthorID {
			return true
		}
	}
	return false
}

// ProposalEvent is the history row of a proposal that changed nothing: its decision, note
// and metadata, and unless it is redacted the content it proposed, said where the batch came
// from. The store adds what the target says now (OldContent, OldOrigin, Version), or clears
// MemoryID when the target is not in the proposal's scope; a redacted proposal never points
// at a memory.
func ProposalEvent(p memory.Proposal, from memory.Origin, action memory.Action, note string) memory.HistoryEvent {
	meta := make(map[string]any, len(p.Metadata)+3)
	for k, v := range p.Metadata {
		meta[k] = v
	}
	meta["proposed"] = p.Action
	if p.Memory.SubjectID != "" {
		meta["subject_id"] = p.Memory.SubjectID // so forget-me finds proposals about the member
	}
	if note != "" {
		meta["note"] = note
	}
	if len(p.Contradicts) > 0 {
		meta["contradicts"] = p.Contradicts
	}
	if refs := evidenceRefs(p); len(refs) > 0 {
		meta["evidence"] = refs // so forget-me finds proposals that quote the member's words
	}
	ev := memory.HistoryEvent{MemoryID: p.TargetID, ScopeKey: p.Owner.Key(), Action: action, Actor: memory.ActorPipeline,
		Reason: p.Reason, Metadata: mustJSON(meta)}
	if p.Redact {
		ev.MemoryID = 0
	} else {
		ev.NewContent, ev.NewOrigin = memory.CollapseSpace(p.Memory.Content), &from
	}
	return ev
}

// ContradictionEvents are the two review_needed rows that flag m and other, a memory p
// says m contradicts, each pointing at the other and quoting it with its origin. Nothing is
// changed: a person decides which statement is right.
func ContradictionEvents(p memory.Proposal, other, m *memory.Memory) []memory.HistoryEvent {
	out := make([]memory.HistoryEvent, 0, 2)
	for _, pair := range [][2]*memory.Memory{{other, m}, {m, other}} {
		meta := map[string]any{"conflicts_with": pair[1].ID}
		for k, v := range p.Metadata {
			meta[k] = v
		}
		out = append(out, memory.HistoryEvent{MemoryID: pair[0].ID, ScopeKey: p.Owner.Key(),
			Action: memory.ActionReview, OldContent: pair[0].Content, NewContent: pair[1].Content,
			OldOrigin: memory.OriginOf(pair[0]), NewOrigin: memory.OriginOf(pair[1]),
			Version: pair[0].Version, Actor: memory.ActorPipeline,
			Reason: fmt.Sprintf("may contradict #%d", pair[1].ID), Metadata: mustJSON(meta)})
	}
	return out
}

// ChangeMetadata is what a pipeline UPDATE adds to its history row: the proposal's
// metadata and, under "evidence", the messages the new content was written from. The
// memory's evidence rows say which messages a memory rests on; this row says which of them
// wrote its words now, so that deleting those messages undoes the update
// (UpdateSourcesGone) and the forget-me of their only author removes the memory.
func ChangeMetadata(p memory.Proposal) map[string]any {
	meta := make(map[string]any, len(p.Metadata)+1)
	for k, v := range p.Metadata {
		meta[k] = v
	}
	if refs := evidenceRefs(p); len(refs) > 0 {
		meta["evidence"] = refs
	}
	return meta
}

// evidenceRefs are the messages a proposal's words were written from, as its history row
// names them under "evidence".
func evidenceRefs(p memory.Proposal) []map[string]string {
	var refs []map[string]string
	for _, e := range p.Evidence {
		if e.MessageID != "" {
			refs = append(refs, map[string]string{"message_id": e.MessageID, "user_id": e.AuthorID})
		}
	}
	return refs
}

// ForgetMeProposalActions are the history actions of rows that quote a proposal or another
// memory rather than a change their memory went through: forget-me removes those whose
// words came from the member (ProposalEvent's evidence) or from a memory it erases
// (ContradictionEvents' conflicts_with).
const ForgetMeProposalActions = `'skipped', 'shadow', 'blocked', 'review_needed', 'deduped'`

// UpdateSourcesGone reports whether every message a pipeline update's history metadata
// names as its source is deleted: among deleted now, or no longer among the memory's
// evidence rows (remaining) because it was deleted before. A row naming no source (written
// before updates recorded them) reports false: nothing is known to undo.
func UpdateSourcesGone(metadata []byte, deleted, remaining []string) bool {
	var meta struct {
		Evidence []struct {
			MessageID string `json:"message_id"`
		} `json:"evidence"`
	}
	if json.Unmarshal(metadata, &meta) != nil || len(meta.Evidence) == 0 {
		return false
	}
	for _, e := range meta.Evidence {
		if !slices.Contains(deleted, e.MessageID) && slices.Contains(remaining, e.MessageID) {
			return false
		}
	}
	return true
}

// UndoUpdateChange is the change that takes m back to before a pipeline update: the content
// the update replaced (before), said where its history row records it was said (oldChannel;
// NULL on rows written before origins were recorded, which name no sources and are never
// undone), so the memory goes back where its words may go.
func UndoUpdateChange(m *memory.Memory, before string, oldChannel sql.NullString) memory.Change {
	change := memory.Change{Content: &before, Reason: ReasonSourceDeleted}
	if ch := oldChannel.String; oldChannel.Valid && ch != "" && ch != m.Provenance.ChannelID {
		change.ChannelID = &ch
	}
	return change
}
