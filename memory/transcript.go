package memory

import (
	"time"
)

// Turn is one transcript row.
type Turn struct {
	ID        int64
	GuildID   string // "" in DMs
	ChannelID string
	// UserID is whose conversation this is: the author of a user turn, the person an
	// assistant turn answered.
	UserID     string
	AuthorName string
	Role       string // "user" or "assistant"
	Content    string
	MessageID  string
	CreatedAt  time.Time
	// CanEditServer records that the speaker of a user turn could change the guild's server
	// memory when they spoke (Manage Server or the editor role). The pipeline lets a
	// conversation update or delete server memory only through such a speaker or the
	// memory's author.
	CanEditServer bool
	// NoLearning marks a turn said where kioku does not learn (a channel a manager
	// switched off, an age-restricted one, or one whose age restriction is unknown): it is
	// kept for replies and recovery, but extraction never reads it.
	NoLearning bool
}

// Transcript roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Channel names one conversation: a guild channel, or a DM channel with GuildID "".
type Channel struct {
	GuildID   string `json:"guild_id"`
	ChannelID string `json:"channel_id"`
}

// Backlog describes the transcript turns of a channel not extracted yet.
type Backlog struct {
	Cursor    int64     // last extracted turn id
	Turns     int       // turns after the cursor
	UserTurns int       // of which said by people (not the bot)
	LastAt    time.Time // time of the newest turn after the cursor; zero when none
}

// MessageChange reports what DeleteMessages or EditMessage changed.
type MessageChange struct {
	// Turns counts the transcript rows deleted or rewritten.
	Turns int
	// Jobs counts the channel's extraction jobs sent back to extract afresh, because they
	// may have read the message before it changed.
	Jobs int
	// Forgotten lists the pipeline memories soft-deleted because every message they were
	// learned from is now deleted.
	Forgotten []*Memory
	// Reverted lists the memories that got back the content a pipeline update replaced,
	// because every message the update was written from is now deleted.
	Reverted []*Memory
}
