package memory

// Log attribute keys: the same six names in every package, so that one search finds every
// line about a guild, a channel, a member, a message, a memory or a job. Each is added once
// per request scope (a logger made with slog.With), never repeated on a line.
const (
	LogGuildID   = "guild_id"
	LogChannelID = "channel_id"
	LogUserID    = "user_id"
	LogMessageID = "message_id"
	LogMemoryID  = "memory_id"
	LogJobID     = "job_id"
)
