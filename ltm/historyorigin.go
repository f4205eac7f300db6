package ltm

import (
	"database/sql"

	"github.com/kioku-bot/kioku/memory"
)

// Where a history row's texts were said (SPEC §2 "Channel-aware memory"). A row may quote
// words from a channel other than its memory's: the memory's content before a change that
// moved it, a proposal's words from the batch's conversation, the statement of another
// memory it may contradict. Each side records its own origin, so that a view shows a text
// only to those who may read where it was said. Both stores read and write the origin
// columns through these helpers; NULL is unknown (rows written before origins were kept).

// historyOriginColumns are memory_history's origin columns in the order originArgs and
// scanOrigins use: old guild, old channel, new guild, new channel.
const historyOriginColumns = `old_origin_guild, old_origin_channel, new_origin_guild, new_origin_channel`

// HistoryOriginColumns is historyOriginColumns for the PostgreSQL store.
const HistoryOriginColumns = historyOriginColumns

// OriginArgs are the values of the origin columns of ev, NULL for an unknown side.
func OriginArgs(ev memory.HistoryEvent) []any {
	out := make([]any, 0, 4)
	for _, o := range []*memory.Origin{ev.OldOrigin, ev.NewOrigin} {
		if o == nil {
			out = append(out, nil, nil)
			continue
		}
		out = append(out, o.GuildID, o.ChannelID)
	}
	return out
}

// OriginScan holds the origin columns of one row while it is scanned.
type OriginScan [4]sql.NullString

// Targets are the scan destinations, in historyOriginColumns order.
func (s *OriginScan) Targets() []any { return []any{&s[0], &s[1], &s[2], &s[3]} }

// SetOn fills ev's origins from the scanned columns; a side with no guild column is unknown.
func (s *OriginScan) SetOn(ev *memory.HistoryEvent) {
	side := func(guild, channel sql.NullString) *memory.Origin {
		if !guild.Valid {
			return nil
		}
		return &memory.Origin{GuildID: guild.String, ChannelID: channel.String}
	}
	ev.OldOrigin, ev.NewOrigin = side(s[0], s[1]), side(s[2], s[3])
}

// DecisionOriginSQL gives the newest history row of a memory the origin of the decision
// that wrote it, as its new side: a pipeline DELETE's row carries no new text, but its
// reason is the model's account of a conversation in the batch's channel (args: guild,
// channel, memory id).
const DecisionOriginSQL = `UPDATE memory_history SET new_origin_guild = ?, new_origin_channel = ?
	WHERE id = (SELECT max(id) FROM memory_history WHERE memory_id = ?)`
