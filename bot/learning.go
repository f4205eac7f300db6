package bot

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Learning controls, the Discord side: whether kioku learns from what is said in a guild
// channel (memory.GuildSettings.ChannelLearns). A manager's choice in /kioku config decides;
// without one a channel learns unless Discord marks it age-restricted (NSFW). Where kioku
// does not learn it still answers and keeps the turns for replies, but extraction never
// reads them and the model saves nothing (chat.Request.NoLearning).

// learningWhy says what decided whether a channel learns, for the texts that explain it.
type learningWhy string

const (
	learningDefault       learningWhy = "default"        // no choice, not age-restricted
	learningSet           learningWhy = "set"            // a manager's choice for the channel
	learningParentSet     learningWhy = "parent_set"     // a manager's choice for the thread's channel
	learningAgeRestricted learningWhy = "age_restricted" // Discord marks it (or its channel) NSFW
	learningUnknown       learningWhy = "unknown"        // the state knows neither the channel nor a choice
)

// channelLearning reports whether kioku learns in a guild channel under gs, and why.
func (b channelVisibility) channelLearning(gs memory.GuildSettings, channelID string) (bool, learningWhy) {
	parentID, ageRestricted := b.ageRestricted(channelID)
	learns := gs.ChannelLearns(channelID, parentID, ageRestricted)
	_, set := gs.LearningChannels[channelID]
	_, parentSet := gs.LearningChannels[parentID]
	switch {
	case set:
		return learns, learningSet
	case parentID != "" && parentSet:
		return learns, learningParentSet
	case ageRestricted == nil:
		return learns, learningUnknown
	case *ageRestricted:
		return learns, learningAgeRestricted
	}
	return learns, learningDefault
}

// ageRestricted reads from discordgo's state (kept by the Guilds intent) whether Discord
// marks a channel age-restricted, and a thread's channel: a thread is as age-restricted as
// the channel it belongs to. It returns nil when the state does not know the channel (or a
// thread's channel): the caller must then not learn there, since an age-restricted channel
// must never be learned from by mistake (unknown means not visible).
func (b channelVisibility) ageRestricted(channelID string) (parentID string, restricted *bool) {
	st := b.session.State
	if st == nil {
		return "", nil
	}
	// The state updates channels in place: their fields are read under its lock (taken
	// after each lookup, which locks by itself).
	read := func(id string) (*discordgo.Channel, bool) {
		ch, err := st.Channel(id)
		if err != nil {
			return nil, false
		}
		st.RLock()
		defer st.RUnlock()
		c := *ch
		return &c, true
	}
	ch, ok := read(channelID)
	if !ok {
		return "", nil
	}
	if ch.IsThread() {
		parentID = ch.ParentID
		if ch, ok = read(parentID); !ok {
			return parentID, nil
		}
	}
	nsfw := ch.NSFW
	return parentID, &nsfw
}

// threadsOf lists the threads of a channel that discordgo's state knows, which follow the
// channel's learning unless switched themselves.
func (b channelVisibility) threadsOf(guildID, channelID string) []string {
	st := b.session.State
	if st == nil {
		return nil
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return nil
	}
	st.RLock()
	defer st.RUnlock()
	var out []string
	for _, th := range g.Threads {
		if th.ParentID == channelID {
			out = append(out, th.ID)
		}
	}
	return out
}

// messageLearns reports whether the turn of guild message m may be learned from, from the
// guild's settings read for the message; settings that cannot be read leave it unknown,
// which does not learn.
func (b channelVisibility) messageLearns(ctx context.Context, m *discordgo.Message, settings *messageSettings) bool {
	gs, err := settings.guild(ctx)
	if err != nil {
		return false
	}
	learns, _ := b.channelLearning(gs, m.ChannelID)
	return learns
}

// learningText says in l whether a channel learns and why.
func learningText(l i18n.Locale, learns bool, why learningWhy) string {
	state := "off"
	if learns {
		state = "on"
	}
	return i18n.T(l, i18n.Key("learning."+state+"."+string(why)))
}
