package bot

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Languages a server may choose for the messages kioku posts in its channels (/kioku
// config language). Auto follows the server's preferred locale (Community settings).
const (
	languageAuto = "auto"
	languageEN   = "en"
	languageJA   = "ja"
)

// locale is the language to answer c in: the member's client language, else the server's.
// Replies to an interaction are seen by the member who made it, so their language wins.
func (c *call) locale() i18n.Locale {
	if c.i.Locale != "" {
		return i18n.Parse(string(c.i.Locale))
	}
	if c.i.GuildLocale != nil {
		return i18n.Parse(string(*c.i.GuildLocale))
	}
	return i18n.English
}

// t formats a catalogue message in the caller's language.
func (c *call) t(key i18n.Key, args ...any) string { return i18n.T(c.locale(), key, args...) }

// guildLocale is the language of messages posted in a guild's channels, read by everyone
// there: the server's language setting, else its preferred locale as Discord reports it
// (from the interaction when there is one, else from the gateway's guild state). DMs and
// unknown servers get English.
func (b *core) guildLocale(gs memory.GuildSettings, hint string) i18n.Locale {
	switch gs.Language {
	case languageEN:
		return i18n.English
	case languageJA:
		return i18n.Japanese
	}
	if hint != "" {
		return i18n.Parse(hint)
	}
	if gs.GuildID == "" || b.session.State == nil {
		return i18n.English
	}
	g, err := b.session.State.Guild(gs.GuildID)
	if err != nil || g == nil {
		return i18n.English
	}
	return i18n.Parse(string(g.PreferredLocale))
}

// channelLocale is the language of what c posts for everyone in the channel (notices that
// stay in the channel): the guild's, in a DM the caller's.
func (c *call) channelLocale(ctx context.Context) i18n.Locale {
	if c.inDM() {
		return c.locale()
	}
	gs, err := c.b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		c.log.Warn("couldn't read guild settings for the language", "err", err)
	}
	hint := ""
	if c.i.GuildLocale != nil {
		hint = string(*c.i.GuildLocale)
	}
	return c.b.guildLocale(gs, hint)
}

// catalogued marks a domain error made from a catalogue message, so the edge can show it in
// the reader's language. It hangs under memory.Error's Err, where the code stays readable by
// memory.ErrorCode and the English message is what logs and other transports see.
type catalogued struct {
	key  i18n.Key
	args []any
}

func (e *catalogued) Error() string { return "message " + string(e.key) }

// errT builds a domain error with code whose message is the catalogue's key.
func errT(code string, key i18n.Key, args ...any) *memory.Error {
	return &memory.Error{Code: code, Message: i18n.T(i18n.English, key, args...), Err: &catalogued{key: key, args: args}}
}

// errorText is what a member reads for err in locale l. A catalogued error is shown in l.
// Other domain errors (from the store and the domain) carry English messages: English
// readers get them as they are, others get the catalogue's message for the error's code
// with the English detail below it, so nothing the detail says (an id, a limit) is lost.
func errorText(err error, l i18n.Locale) string {
	if c, ok := errors.AsType[*catalogued](err); ok {
		return i18n.T(l, c.key, c.args...)
	}
	code := memory.ErrorCode(err)
	if code == memory.EINTERNAL {
		if _, domain := errors.AsType[*memory.Error](err); !domain {
			return i18n.T(l, "error.internal")
		}
	}
	msg := memory.ErrorMessage(err)
	if l == i18n.English {
		return msg
	}
	generic := i18n.T(l, i18n.Key("error.code."+code))
	if strings.HasPrefix(generic, "error.code.") {
		generic = i18n.T(l, "error.internal")
	}
	return generic + "\n-# " + msg
}

// localizeCommands fills every command, option and choice with its catalogue texts: the
// English ones as the default and the others as Discord localizations. A name or
// description without a catalogue entry keeps what the definition says, and the command
// test names it.
func localizeCommands(cmds []*discordgo.ApplicationCommand) []*discordgo.ApplicationCommand {
	for _, c := range cmds {
		path := "cmd." + c.Name
		if loc := localizations(path + ".name"); loc != nil {
			c.NameLocalizations = &loc
		}
		if c.Type == discordgo.ChatApplicationCommand || c.Type == 0 {
			if t, ok := i18n.Lookup(i18n.Key(path + ".desc")); ok {
				loc := localizations(path + ".desc")
				c.Description, c.DescriptionLocalizations = t.EN, &loc
			}
		}
		localizeOptions(path, c.Options)
	}
	return cmds
}

func localizeOptions(path string, opts []*discordgo.ApplicationCommandOption) {
	for _, o := range opts {
		sub := o.Type == discordgo.ApplicationCommandOptionSubCommand || o.Type == discordgo.ApplicationCommandOptionSubCommandGroup
		p := path + "." + o.Name
		nameKey, descKeys := "opt."+o.Name+".name", []string{p + ".desc", "opt." + o.Name + ".desc"}
		if sub {
			nameKey, descKeys = p+".name", []string{p + ".desc"}
		}
		o.NameLocalizations = localizations(nameKey)
		for _, k := range descKeys {
			if t, ok := i18n.Lookup(i18n.Key(k)); ok {
				o.Description, o.DescriptionLocalizations = t.EN, localizations(k)
				break
			}
		}
		for _, ch := range o.Choices {
			if v, ok := ch.Value.(string); ok {
				k := "choice." + o.Name + "." + v
				if t, ok := i18n.Lookup(i18n.Key(k)); ok {
					ch.Name, ch.NameLocalizations = t.EN, localizations(k)
				}
			}
		}
		if sub {
			localizeOptions(p, o.Options)
		}
	}
}

// localizations are the non-English texts of key by Discord locale, or nil.
func localizations(key string) map[discordgo.Locale]string {
	loc := i18n.Localizations(i18n.Key(key))
	if loc == nil {
		return nil
	}
	out := make(map[discordgo.Locale]string, len(loc))
	for k, v := range loc {
		out[discordgo.Locale(k)] = v
	}
	return out
}

// durationText renders a duration as people say it in l: "30 days", "10 minutes".
func durationText(l i18n.Locale, d time.Duration) string { return uxDuration(l, d) }

// scopeName is a memory scope as people read it in l ("server", "サーバー").
func scopeName(l i18n.Locale, o memory.Owner) string {
	return i18n.T(l, i18n.Key("choice.scope."+string(o.Scope)))
}

// describeIn names a scope for people in l: "this server's memory", "your personal memory".
func describeIn(l i18n.Locale, o memory.Owner) string {
	return i18n.T(l, i18n.Key("scope.describe."+string(o.Scope)))
}

// describeActorIn renders a history actor in l: people as mentions (which render as names
// and ping nobody, since replies allow no mentions), kioku's own actors by name.
func describeActorIn(l i18n.Locale, actor memory.Actor) string {
	switch {
	case actor == memory.ActorPipeline:
		return i18n.T(l, "actor.pipeline")
	case actor == memory.ActorDiscord:
		return i18n.T(l, "actor.discord")
	case actor.UserID() != "":
		return "<@" + actor.UserID() + ">"
	case actor.ModelUserID() != "":
		return i18n.T(l, "actor.model", actor.ModelUserID())
	}
	return string(actor)
}
