package memory

import "time"

// What kioku keeps of a guild: its channels and roles, which decide who may see what (SPEC
// §2 "Channel-aware memory"), what it holds there, and its departure once the bot was
// removed (leaving a server, SPEC §2, §6).

// DefaultGuildPurgeAfter is how long a departed guild's data is kept, so that a server that
// removed the bot by mistake and adds it back finds its memory as it was.
const DefaultGuildPurgeAfter = 30 * 24 * time.Hour

// Departure is a guild the bot was removed from and whose data waits for its purge.
type Departure struct {
	GuildID    string    `json:"guild_id"`
	LeftAt     time.Time `json:"left_at"`
	PurgeAfter time.Time `json:"purge_after"`
}

// GuildSummary is what kioku holds about one guild, for `kioku guilds list`.
type GuildSummary struct {
	GuildID string `json:"guild_id"`
	// ServerMemories and PersonalMemories count live memories that originated in the
	// guild; Forgotten counts its soft-deleted ones, still recoverable.
	ServerMemories   int `json:"server_memories"`
	PersonalMemories int `json:"personal_memories"`
	Forgotten        int `json:"forgotten"`
	Transcripts      int `json:"transcripts"`
	// Departure is set when the bot was removed from the guild.
	Departure *Departure `json:"departure,omitempty"`
}

// Overwrite is one Discord permission overwrite as kioku stores it: a role (Type 0) or
// member (Type 1) id and the permission bits it allows and denies.
type Overwrite struct {
	ID    string `json:"id"`
	Type  int    `json:"type"`
	Allow int64  `json:"allow"`
	Deny  int64  `json:"deny"`
}

// GuildChannel is what kioku last saw of a guild channel's visibility (SPEC §2
// "Channel-aware memory"). The bot keeps it so that memories learned in a channel that was
// since deleted keep that channel's rule: who could not see the channel still cannot see
// them.
type GuildChannel struct {
	GuildID   string
	ChannelID string
	// ParentID is a thread's channel, or a channel's category.
	ParentID string
	// Kind is Discord's channel type.
	Kind          int
	PrivateThread bool
	Overwrites    []Overwrite
	// DeletedAt is when the channel was deleted; zero while it exists.
	DeletedAt time.Time
	UpdatedAt time.Time
}

// GuildRoles is what kioku last saw of a guild's roles and owner (SPEC §2 "Channel-aware
// memory"): with the guild's channels it decides who can view what, so any process decides
// as the one that receives the guild's events. Roles maps role ids to their permission
// bits; the @everyone role's id is the guild's.
type GuildRoles struct {
	GuildID   string
	OwnerID   string
	Roles     map[string]int64
	UpdatedAt time.Time
}
