package tools

import (
	"slices"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// Participant is one person taking part in a conversation, with the settings that decide
// what the bot may do with their personal memory.
type Participant struct {
	UserID string
	Name   string
	// Privacy is the user's global privacy level; only PrivacyNormal lets the model read or
	// write their personal memory.
	Privacy memory.Privacy
	// CrossServer lets their personal memories from other guilds (and DMs) be used here.
	CrossServer bool
}

// personalAllowed reports whether the model may see and write p's personal memory.
func (p Participant) personalAllowed() bool {
	return p.Privacy == memory.PrivacyNormal || p.Privacy == ""
}

// Conversation is what the tools know about the turn they run in: where it happens, who
// is talking, and which tools the turn allows. The chat turn builds it once per message.
type Conversation struct {
	GuildID   string // "" in a DM
	ChannelID string
	MessageID string
	// Speaker wrote the message being answered.
	Speaker Participant
	// Others are the other recent participants of a guild channel (never set in DMs).
	Others []Participant
	// SelfTeaching offers the long-term memory write tools. Guilds opt in with
	// /kioku config; DMs have it on by default.
	SelfTeaching bool
	// NoLearning is set where kioku does not learn (a channel a manager switched off, or
	// one Discord marks age-restricted): the long-term memory write tools are not offered,
	// whatever SelfTeaching says, and a member saves what they want kept with /memory add
	// or Remember this.
	NoLearning bool
	// ExplicitIntent is set when the intent gate fired: the user asked for long-term
	// memory, so the short-term memory tool is neither offered nor accepted and what they
	// asked to keep cannot end up only in a summary that expires.
	ExplicitIntent bool
	// ServerEditor is set when the speaker may change this guild's server memory (Manage
	// Server or the editor role). Without it the model may still add server memories, but
	// changes or forgets only the server memories the speaker authored.
	ServerEditor bool
	// Audience is the channel rule of the reply (SPEC §2 "Channel-aware memory"): server
	// memories it does not allow cannot be changed from here and do not count as
	// duplicates. Nil restricts nothing.
	Audience *memory.Audience
	// PromptAuthors are the users whose words the prompt carries beyond the participants
	// (authors of older turns in the history), so a short-term summary written from it
	// is dropped by any of their forget-me.
	PromptAuthors []string
	// PromptMessages are the Discord message ids of the history turns the prompt quotes,
	// so a short-term summary written from it is dropped when any of them is deleted.
	PromptMessages []string
	// Now is the time of the turn; search_memories counts ages ("since 7d") back from it.
	// Zero means the wall clock.
	Now time.Time
}

// writeContext is the speaker in this place, for writes whose outcome the model and the
// people in the conversation see.
func (c *Conversation) writeContext() memory.WriteContext {
	return memory.WriteContext{WriterID: c.Speaker.UserID, GuildID: c.GuildID, ChannelID: c.ChannelID, Audience: c.Audience}
}

// QuoteMemories records the people whose words the memories shown to the model may carry
// (owner, author, subject) among PromptAuthors, so that a short-term summary written from
// the prompt is dropped by any of their forget-me.
func (c *Conversation) QuoteMemories(mems ...*memory.Memory) {
	for _, m := range mems {
		for _, id := range []string{m.UserID, m.Provenance.AuthorID, m.SubjectID} {
			if id != "" && !slices.Contains(c.PromptAuthors, id) {
				c.PromptAuthors = append(c.PromptAuthors, id)
			}
		}
	}
}

// IsDM reports whether the conversation is a direct message.
func (c *Conversation) IsDM() bool { return c.GuildID == "" }

// Participants returns the speaker followed by the others.
func (c *Conversation) Participants() []Participant {
	return append([]Participant{c.Speaker}, c.Others...)
}

// ServerOwner returns the guild's server memory owner, and false in a DM.
func (c *Conversation) ServerOwner() (memory.Owner, bool) {
	if c.IsDM() {
		return memory.Owner{}, false
	}
	return memory.ServerOwner(c.GuildID), true
}

// PersonalVisible returns the slices of personal memory this conversation may read, per
// SPEC §2: in a DM the speaker's whole personal memory; in a guild each participant's
// memories that originated in this guild, or all of them when that participant opted into
// cross-server use. Participants whose privacy is partial or full contribute nothing.
func (c *Conversation) PersonalVisible() []memory.Visible {
	var out []memory.Visible
	for _, p := range c.Participants() {
		if v, ok := c.personalVisible(p); ok {
			out = append(out, v)
		}
	}
	return out
}

func (c *Conversation) personalVisible(p Participant) (memory.Visible, bool) {
	if p.UserID == "" || !p.personalAllowed() {
		return memory.Visible{}, false
	}
	v := memory.Visible{Owner: memory.PersonalOwner(p.UserID)}
	if !c.IsDM() && !p.CrossServer {
		v.OriginGuildID = c.GuildID
	}
	return v, true
}

// visibleHere reports whether the personal memory m may be used in this conversation
// under the origin rule: any origin in a DM, this guild's or a cross-server user's in a
// guild.
func (c *Conversation) visibleHere(p Participant, m *memory.Memory) bool {
	v, ok := c.personalVisible(p)
	return ok && (v.OriginGuildID == "" || v.OriginGuildID == m.GuildID)
}

// STMKey is the short-term memory entry a summary of this conversation belongs to: the
// channel's shared entry in a guild, since everyone there sees the same conversation, and
// the speaker's entry in a DM, which has no shared entry.
func (c *Conversation) STMKey() stm.Key {
	if c.IsDM() {
		return stm.UserKey("", c.ChannelID, c.Speaker.UserID)
	}
	return stm.ChannelKey(c.GuildID, c.ChannelID)
}

// resolveTarget finds the participant a target_user argument names: empty means the
// speaker; otherwise a user id, a Discord mention (<@id>, <@!id>) or a display name
// (case-insensitive, when it names exactly one participant). Only participants can be
// targeted, so the model cannot write into the memory of someone who is not in the
// conversation.
func (c *Conversation) resolveTarget(target string) (Participant, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return c.Speaker, nil
	}
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(target, "<@"), "!"), ">")
	if strings.HasPrefix(target, "<@") {
		target = id
	}
	people := c.Participants()
	for _, p := range people {
		if p.UserID == target {
			return p, nil
		}
	}
	var found []Participant
	name := strings.TrimPrefix(target, "@")
	for _, p := range people {
		if p.Name != "" && strings.EqualFold(p.Name, name) {
			found = append(found, p)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) > 1 {
		return Participant{}, memory.Errorf(memory.EINVALID, "Several participants are called %q; use the user id instead.", name)
	}
	if c.IsDM() {
		return Participant{}, memory.Errorf(memory.EINVALID, "In a direct message the only target_user is the person you are talking to (%s); omit target_user.", c.Speaker.UserID)
	}
	return Participant{}, memory.Errorf(memory.EINVALID, "target_user %q is not part of this conversation; personal memories can only be saved for its participants (%s).", target, c.participantList())
}

func (c *Conversation) participantList() string {
	parts := make([]string, 0, 1+len(c.Others))
	for _, p := range c.Participants() {
		if p.Name != "" {
			parts = append(parts, p.Name+" = "+p.UserID)
		} else {
			parts = append(parts, p.UserID)
		}
	}
	return strings.Join(parts, ", ")
}

// nameOf returns a participant's display name, or their id when it is unknown.
func nameOf(p Participant) string {
	if p.Name != "" {
		return p.Name
	}
	return p.UserID
}
