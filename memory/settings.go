package memory

import (
	"time"
)

// UserSettings are a user's global choices.
type UserSettings struct {
	UserID  string
	Privacy Privacy
	// CrossServer lets the user's personal memories from one guild (or DMs) be used in the
	// other guilds they talk in. Off by default: a memory stays where it was made.
	CrossServer bool
	UpdatedAt   time.Time
}

// GuildSettings are a guild's /kioku config values.
type GuildSettings struct {
	GuildID string
	// SelfTeaching offers the model the long-term memory tools in this guild. Off by default:
	// an admin decides whether the bot may write server memory on its own.
	SelfTeaching      bool
	PipelineMode      PipelineMode
	AutoReplyChannels []string
	Persona           string
	// EditorRoleID, when set, lets members with that role edit server memory in addition to
	// those with Manage Server.
	EditorRoleID string
	// Language is the language of the messages the bot posts in the guild's channels:
	// LanguageAuto (the guild's preferred locale) or a language code ("en", "ja").
	Language string
	// LearningChannels are the channels (and threads) whose learning a manager switched
	// with /kioku config: true learns, false does not. A channel it does not name follows
	// the default, ChannelLearns. SaveGuildSettings leaves it alone; only
	// SetChannelLearning changes it, because switching a channel off also stops its
	// pending extraction.
	LearningChannels map[string]bool
	UpdatedAt        time.Time
}

// ChannelLearns reports whether kioku may learn from what is said in a guild channel:
// whether extraction may read its turns and the model may save memories there. A
// manager's choice for the channel decides, else the one for parentID (a thread's
// channel; "" for none). Without a choice a channel learns unless Discord marks it
// age-restricted; ageRestricted is nil when that is not known, and an unknown channel
// does not learn (unknown means not visible).
func (gs GuildSettings) ChannelLearns(channelID, parentID string, ageRestricted *bool) bool {
	if on, ok := gs.LearningChannels[channelID]; ok {
		return on
	}
	if on, ok := gs.LearningChannels[parentID]; ok && parentID != "" {
		return on
	}
	return ageRestricted != nil && !*ageRestricted
}

// LanguageAuto lets a guild's messages follow its preferred locale.
const LanguageAuto = "auto"

// Languages are the values of GuildSettings.Language.
var Languages = []string{LanguageAuto, "en", "ja"}

// ValidateLanguage returns the stored form of a guild language (empty is auto) or EINVALID.
func ValidateLanguage(l string) (string, error) {
	if l == "" {
		return LanguageAuto, nil
	}
	for _, v := range Languages {
		if l == v {
			return l, nil
		}
	}
	return "", Errorf(EINVALID, "Unknown language %q: use auto, en or ja.", l)
}
