package fakediscord

import (
	"fmt"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
)

// DispatchMessageDelete sends MESSAGE_DELETE for one message, as Discord does: only its
// id, channel and guild (guildID "" in a DM). The fake forgets the message.
func (f *Fake) DispatchMessageDelete(guildID, channelID, messageID string) error {
	f.mu.Lock()
	delete(f.stored, messageID)
	f.mu.Unlock()
	body := map[string]string{"id": messageID, "channel_id": channelID}
	if guildID != "" {
		body["guild_id"] = guildID
	}
	return f.Dispatch("MESSAGE_DELETE", body)
}

// DispatchMessageDeleteBulk sends MESSAGE_DELETE_BULK, a moderator's purge of several
// messages of a guild channel. The fake forgets the messages.
func (f *Fake) DispatchMessageDeleteBulk(guildID, channelID string, messageIDs ...string) error {
	f.mu.Lock()
	for _, id := range messageIDs {
		delete(f.stored, id)
	}
	f.mu.Unlock()
	return f.Dispatch("MESSAGE_DELETE_BULK", map[string]any{"ids": slices.Clone(messageIDs),
		"channel_id": channelID, "guild_id": guildID})
}

// DispatchMessageUpdate sends MESSAGE_UPDATE for m, an edited message. Discord sends
// partial updates too (an embed unfurled: no content, no author); build m with only the
// fields to send. A stored message takes the new content when m has some.
func (f *Fake) DispatchMessageUpdate(m *discordgo.Message) error {
	raw, err := marshalMessage(m)
	if err != nil {
		return fmt.Errorf("fakediscord: couldn't encode MESSAGE_UPDATE: %w", err)
	}
	f.mu.Lock()
	if stored, ok := f.stored[m.ID]; ok && m.Content != "" {
		stored.Content = m.Content
		stored.EditedTimestamp = m.EditedTimestamp
	}
	f.mu.Unlock()
	return f.Dispatch("MESSAGE_UPDATE", raw)
}

// DispatchGuildDelete sends GUILD_DELETE for a guild. unavailable true is an outage: the
// bot is still a member. unavailable false means the bot was removed (kicked, or the
// guild deleted): the fake then stops listing the guild when a client identifies.
func (f *Fake) DispatchGuildDelete(guildID string, unavailable bool) error {
	if !unavailable {
		f.mu.Lock()
		f.guildOrder = slices.DeleteFunc(f.guildOrder, func(id string) bool { return id == guildID })
		f.notifyLocked()
		f.mu.Unlock()
	}
	return f.Dispatch("GUILD_DELETE", map[string]any{"id": guildID, "unavailable": unavailable})
}

// DispatchGuildCreate sends GUILD_CREATE for a guild set with SetGuild, as when the bot
// is added to it (again), with joined_at now, and lists it again for later identifies.
func (f *Fake) DispatchGuildCreate(guildID string) error {
	f.mu.Lock()
	if _, ok := f.guilds[guildID]; !ok {
		f.mu.Unlock()
		return fmt.Errorf("fakediscord: unknown guild %s; call SetGuild first", guildID)
	}
	if !slices.Contains(f.guildOrder, guildID) {
		f.guildOrder = append(f.guildOrder, guildID)
	}
	// Added (again) now: later identifies say so too, as Discord's joined_at does.
	f.guilds[guildID].JoinedAt = time.Now().UTC()
	g := f.guildCreateLocked(guildID)
	f.notifyLocked()
	f.mu.Unlock()
	return f.Dispatch("GUILD_CREATE", g)
}
