package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
)

// welcome introduces kioku once to a server it joined: a short note in the server's
// system channel on what it remembers, how members see and delete it, and where admins
// steer it. Discord sends GUILD_CREATE for every server on every connect, so the store
// keeps which servers were welcomed; the claim comes first, so a restart or a second
// connect never posts twice. A server without a system channel, or whose system channel
// the bot may not write in, gets no note (and is not asked again). A post that failed for
// another reason (Discord down) hands the claim back for the next connect.
func (b messageEvents) welcome(ctx context.Context, log *slog.Logger, g *discordgo.Guild) {
	first, err := b.store.Guilds.ClaimWelcome(ctx, g.ID)
	if err != nil {
		log.Error("couldn't check whether the server was welcomed", "err", err)
		return
	}
	if !first {
		return
	}
	if g.SystemChannelID == "" {
		log.Info("no system channel; the server gets no welcome note")
		return
	}
	if !b.maySend(g.SystemChannelID) {
		log.Info("no permission to post in the system channel; the server gets no welcome note",
			"channel_id", g.SystemChannelID)
		return
	}
	gs, err := b.store.Settings.GuildSettings(ctx, g.ID)
	if err != nil {
		log.Warn("couldn't read guild settings for the welcome's language", "err", err)
	}
	l := b.guildLocale(gs, string(g.PreferredLocale))
	send := &discordgo.MessageSend{Embeds: []*discordgo.MessageEmbed{WelcomeEmbed(l)}, AllowedMentions: noMentions()}
	if _, err := b.session.ChannelMessageSendComplex(g.SystemChannelID, send, discordgo.WithContext(ctx)); err != nil {
		if restErr, ok := errors.AsType[*discordgo.RESTError](err); ok && restErr.Response != nil &&
			(restErr.Response.StatusCode == http.StatusForbidden || restErr.Response.StatusCode == http.StatusNotFound) {
			log.Info("the system channel refused the welcome note", "channel_id", g.SystemChannelID, "err", err)
			return
		}
		log.Warn("couldn't post the welcome note; trying again on the next connect", "err", err)
		if err := b.store.Guilds.ReleaseWelcome(context.WithoutCancel(ctx), g.ID); err != nil {
			log.Error("couldn't release the welcome claim", "err", err)
		}
		return
	}
	log.Info("welcomed the server", "channel_id", g.SystemChannelID, "locale", l)
}

// maySend reports whether the bot may post in channelID as far as the gateway state knows;
// when the state cannot tell (the guild or the bot's member not in it), it says yes and
// Discord decides.
func (b messageEvents) maySend(channelID string) bool {
	self := b.botUserID()
	if b.session.State == nil || self == "" {
		return true
	}
	perms, err := b.session.State.UserChannelPermissions(self, channelID)
	if err != nil {
		return true
	}
	if perms&discordgo.PermissionAdministrator != 0 {
		return true
	}
	const need = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionEmbedLinks
	return perms&need == need
}

// WelcomeEmbed is the note a server gets when kioku joins it, in language l.
func WelcomeEmbed(l i18n.Locale) *discordgo.MessageEmbed {
	return &discordgo.MessageEmbed{
		Title:       i18n.T(l, "welcome.title"),
		Description: i18n.T(l, "welcome.description"),
		Color:       colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: i18n.T(l, "welcome.remembers"), Value: i18n.T(l, "welcome.remembers.value")},
			{Name: i18n.T(l, "welcome.see"), Value: i18n.T(l, "welcome.see.value")},
			{Name: i18n.T(l, "welcome.admins"), Value: i18n.T(l, "welcome.admins.value")},
		},
		Footer: &discordgo.MessageEmbedFooter{Text: i18n.T(l, "welcome.footer")},
	}
}
