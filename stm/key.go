package stm

import (
	"errors"
	"fmt"
)

// ErrInvalidKey is returned when a Key addresses no entry the memory model
// allows: a missing channel, or a channel-shared entry in a DM. DMs have only
// the user entry because the user and the bot are the whole conversation, so
// a shared entry there would duplicate it.
var ErrInvalidKey = errors.New("invalid short-term memory key")

// Key addresses one short-term memory entry. Entries are keyed by guild and
// channel so that nothing captured in one server is ever read in another.
//
// UserID empty means the entry shared by everyone in a guild channel;
// GuildID empty means a DM. Build keys with ChannelKey and UserKey rather than
// by hand so a missing user ID cannot silently address the shared entry.
type Key struct {
	GuildID   string
	ChannelID string
	UserID    string
}

// ChannelKey returns the key of the entry shared by everyone in a guild
// channel. With an empty guildID (a DM) the key is invalid: Append and
// SetSummary reject it with ErrInvalidKey and reads find nothing, so a caller
// that handles guilds and DMs alike learns about the mistake instead of
// writing a second copy of the DM.
func ChannelKey(guildID, channelID string) Key {
	return Key{GuildID: guildID, ChannelID: channelID}
}

// UserKey returns the key of one user's entry in a channel; guildID is empty
// in DMs. An empty userID yields the zero Key, which every method rejects,
// because Key{GuildID, ChannelID, ""} is the channel-shared entry and a
// missing user ID must not fall through to other people's messages.
func UserKey(guildID, channelID, userID string) Key {
	if userID == "" {
		return Key{}
	}
	return Key{GuildID: guildID, ChannelID: channelID, UserID: userID}
}

// IsDM reports whether the key belongs to a direct-message channel.
func (k Key) IsDM() bool { return k.GuildID == "" }

// IsShared reports whether the key is a guild channel's shared entry rather
// than one user's.
func (k Key) IsShared() bool { return k.UserID == "" }

// Validate returns ErrInvalidKey, wrapped with the reason, when k addresses
// no entry: no channel, or a shared entry in a DM.
func (k Key) Validate() error {
	switch {
	case k.ChannelID == "":
		return fmt.Errorf("%w: channel ID is empty", ErrInvalidKey)
	case k.IsDM() && k.IsShared():
		return fmt.Errorf("%w: DMs have only per-user entries", ErrInvalidKey)
	}
	return nil
}

// String renders the key for logs as guild/channel/user, with "dm" and "*"
// standing in for the empty guild and the shared entry.
func (k Key) String() string {
	guild, user := k.GuildID, k.UserID
	if guild == "" {
		guild = "dm"
	}
	if user == "" {
		user = "*"
	}
	return guild + "/" + k.ChannelID + "/" + user
}
