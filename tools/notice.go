package tools

import (
	"fmt"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// Notice actions: what a tool did to long-term memory.
const (
	NoticeSaved   = "saved"
	NoticeUpdated = "updated"
	NoticeDeleted = "deleted"
)

// noticePreviewRunes bounds the memory text quoted in a notice: the notice confirms which
// memory changed, the full text is one /memory show away, and a 2000-character memory
// quoted in full would crowd out the reply itself.
const noticePreviewRunes = 200

// Notice tells the people in a conversation that the model changed long-term memory
// during a turn, so nothing is remembered or forgotten behind their backs (SPEC §3 step 6).
type Notice struct {
	// Action is NoticeSaved, NoticeUpdated or NoticeDeleted.
	Action string
	// Scope is the memory's scope.
	Scope memory.Scope
	// MemoryID is the id people use to refer to it ("forget 42").
	MemoryID int64
	// Content is the memory's content after the change (before it, for a deletion).
	Content string
	// UserID owns a personal memory; empty for server memory.
	UserID string
	// Version is the memory's version after the change: the notice's Undo button works
	// only while the memory is still at it.
	Version int
}

// String renders the notice the way the transports show it, e.g.
// "📌 Remembered (server) #42: The raid is on Friday".
func (n Notice) String() string {
	preview := truncate(n.Content, noticePreviewRunes)
	switch n.Action {
	case NoticeSaved:
		return fmt.Sprintf("📌 Remembered (%s) #%d: %s", n.Scope, n.MemoryID, preview)
	case NoticeUpdated:
		return fmt.Sprintf("✏️ Updated #%d: %s", n.MemoryID, preview)
	case NoticeDeleted:
		return fmt.Sprintf("🗑️ Forgot #%d: %s", n.MemoryID, preview)
	}
	return fmt.Sprintf("#%d %s: %s", n.MemoryID, n.Action, preview)
}

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
