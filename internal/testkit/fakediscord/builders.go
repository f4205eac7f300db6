package fakediscord

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// SetChannel makes a channel known (or replaces it): GET /channels/{id}
// returns it, and messages may be posted to it. Use Type
// discordgo.ChannelTypeDM for a DM and ChannelTypeGuildText with GuildID for
// a server channel. Builders register channels they see automatically.
func (f *Fake) SetChannel(ch *discordgo.Channel) {
	c := cloneJSON(ch)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channels[c.ID] = c
	f.notifyLocked()
}

// EveryonePermissions are the permissions the fake gives a guild's @everyone
// role when the test sets none: what Discord gives it in a new server, as far
// as reading and writing channels goes.
const EveryonePermissions = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages |
	discordgo.PermissionReadMessageHistory | discordgo.PermissionAddReactions | discordgo.PermissionEmbedLinks |
	discordgo.PermissionAttachFiles | discordgo.PermissionVoiceConnect | discordgo.PermissionVoiceSpeak

// SetGuild makes a guild known: READY lists it (unavailable, as Discord
// does) and a GUILD_CREATE with its channels and members follows, so
// discordgo's state can compute permissions; GET /guilds/{id} and its roles
// return it. A guild without an @everyone role (id = the guild's) gets one
// with EveryonePermissions. Set it before the client connects.
func (f *Fake) SetGuild(g *discordgo.Guild) {
	c := cloneJSON(g)
	hasEveryone := false
	for _, r := range c.Roles {
		hasEveryone = hasEveryone || r.ID == c.ID
	}
	if !hasEveryone {
		// Discord always sends the @everyone role, whose id is the guild's; bots compute
		// every member's permissions from it.
		c.Roles = append(c.Roles, &discordgo.Role{ID: c.ID, Name: "@everyone", Permissions: EveryonePermissions})
	}
	if c.JoinedAt.IsZero() {
		// Discord's GUILD_CREATE says when the bot joined; a guild set up front was joined
		// before the test began.
		c.JoinedAt = time.Now().UTC().Add(-24 * time.Hour)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.guilds[c.ID]; !ok {
		f.guildOrder = append(f.guildOrder, c.ID)
	}
	f.guilds[c.ID] = c
	f.notifyLocked()
}

// SetMember makes a guild member known to GET /guilds/{id}/members/{user}
// and to GUILD_CREATE. Interactions carry the member's permissions
// themselves (see SlashCommand), so most tests need no members.
func (f *Fake) SetMember(guildID string, m *discordgo.Member) {
	c := cloneJSON(m)
	c.GuildID = guildID
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.members[guildID] == nil {
		f.members[guildID] = map[string]*discordgo.Member{}
	}
	f.members[guildID][c.User.ID] = c
	f.notifyLocked()
}

// RemoveMember makes a member unknown to the guild: GET /guilds/{id}/members/{user} then
// answers 404 Unknown Member, as Discord does once they left or were removed.
func (f *Fake) RemoveMember(guildID, userID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.members[guildID], userID)
	f.notifyLocked()
}

// ensureChannelLocked registers a channel the test did not set explicitly:
// a guild text channel when guildID is set, else a DM with recipient.
func (f *Fake) ensureChannelLocked(channelID, guildID string, recipient *discordgo.User) {
	if channelID == "" {
		return
	}
	if _, ok := f.channels[channelID]; ok {
		return
	}
	ch := &discordgo.Channel{ID: channelID, GuildID: guildID}
	if guildID != "" {
		ch.Type = discordgo.ChannelTypeGuildText
		ch.Name = "channel-" + channelID
	} else {
		ch.Type = discordgo.ChannelTypeDM
		if recipient != nil {
			ch.Recipients = []*discordgo.User{cloneJSON(recipient)}
		}
	}
	f.channels[channelID] = ch
	f.notifyLocked()
}

// NewUser returns a human user with a fresh ID.
func (f *Fake) NewUser(username string) *discordgo.User {
	return &discordgo.User{ID: f.NewSnowflake(), Username: username, Discriminator: "0", GlobalName: username}
}

// GuildMessage builds a MESSAGE_CREATE body for a server channel message.
// Discord lists mentioned users in Mentions but leaves the "<@id>" markup in
// content to the sender, so content should contain it when mentions are
// given. The channel is registered as a guild text channel.
func (f *Fake) GuildMessage(guildID, channelID string, author *discordgo.User, content string, mentions ...*discordgo.User) *discordgo.Message {
	m := f.message(channelID, author, content, mentions)
	m.GuildID = guildID
	// Discord attaches the author's partial member (no user) to guild
	// messages.
	m.Member = &discordgo.Member{JoinedAt: m.Timestamp.Add(-time.Hour), Roles: []string{}}
	f.mu.Lock()
	f.ensureChannelLocked(channelID, guildID, nil)
	f.mu.Unlock()
	return m
}

// DMMessage builds a MESSAGE_CREATE body for a direct message to the bot;
// the channel is registered as a DM with the author.
func (f *Fake) DMMessage(channelID string, author *discordgo.User, content string) *discordgo.Message {
	m := f.message(channelID, author, content, nil)
	f.mu.Lock()
	f.ensureChannelLocked(channelID, "", author)
	f.mu.Unlock()
	return m
}

func (f *Fake) message(channelID string, author *discordgo.User, content string, mentions []*discordgo.User) *discordgo.Message {
	if mentions == nil {
		mentions = []*discordgo.User{}
	}
	return &discordgo.Message{
		ID:          f.NewSnowflake(),
		ChannelID:   channelID,
		Content:     content,
		Timestamp:   time.Now().UTC(),
		Author:      author,
		Mentions:    mentions,
		Attachments: []*discordgo.MessageAttachment{},
		Embeds:      []*discordgo.MessageEmbed{},
		Type:        discordgo.MessageTypeDefault,
	}
}

// ReplyTo turns m into a reply to the referenced message, as Discord sends
// it: a message reference plus the referenced message itself.
func ReplyTo(m, referenced *discordgo.Message) *discordgo.Message {
	m.Type = discordgo.MessageTypeReply
	m.MessageReference = &discordgo.MessageReference{
		Type:      discordgo.MessageReferenceTypeDefault,
		MessageID: referenced.ID,
		ChannelID: referenced.ChannelID,
		GuildID:   referenced.GuildID,
	}
	m.ReferencedMessage = referenced
	return m
}

// botPermissions are what the interaction payload says the bot may do in
// the channel: enough to answer with embeds and files.
const botPermissions = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages |
	discordgo.PermissionEmbedLinks | discordgo.PermissionAttachFiles | discordgo.PermissionReadMessageHistory

// interaction builds the common part of an interaction and registers it so
// the client can answer it. In a guild the invoker comes as Member with
// permissions (what bots check for Manage Server); in a DM as User.
func (f *Fake) interaction(typ discordgo.InteractionType, guildID, channelID string, user *discordgo.User, permissions int64, data discordgo.InteractionData) *discordgo.Interaction {
	i := &discordgo.Interaction{
		ID:        f.NewSnowflake(),
		AppID:     f.appID,
		Type:      typ,
		Data:      data,
		GuildID:   guildID,
		ChannelID: channelID,
		Locale:    discordgo.EnglishUS,
		Token:     "fake-interaction-token-" + f.NewSnowflake(),
		Version:   1,
	}
	if guildID != "" {
		locale := discordgo.EnglishUS
		i.GuildLocale = &locale
		i.Context = discordgo.InteractionContextGuild
		i.AppPermissions = botPermissions
		i.Member = &discordgo.Member{
			User:        user,
			Permissions: permissions,
			Roles:       []string{},
			JoinedAt:    time.Now().UTC().Add(-time.Hour),
		}
	} else {
		i.Context = discordgo.InteractionContextBotDM
		i.User = user
	}
	return i
}

// SlashCommand builds an INTERACTION_CREATE for a chat input command.
// permissions are the member's computed permissions in the channel (ignored
// in DMs, where guildID is empty). When data.ID is empty it is taken from the
// last bulk overwrite with the same name, as Discord would send it.
func (f *Fake) SlashCommand(guildID, channelID string, user *discordgo.User, permissions int64, data discordgo.ApplicationCommandInteractionData) *discordgo.Interaction {
	if data.CommandType == 0 {
		data.CommandType = discordgo.ChatApplicationCommand
	}
	if data.ID == "" {
		data.ID = f.commandID(guildID, data.Name, data.CommandType)
	}
	i := f.interaction(discordgo.InteractionApplicationCommand, guildID, channelID, user, permissions, data)
	f.registerInteraction(i)
	return i
}

// MessageCommand builds an INTERACTION_CREATE for a message context menu
// command (such as "Remember this") invoked on target, which Discord sends
// resolved in the payload.
func (f *Fake) MessageCommand(guildID, channelID string, user *discordgo.User, permissions int64, name string, target *discordgo.Message) *discordgo.Interaction {
	data := discordgo.ApplicationCommandInteractionData{
		ID:          f.commandID(guildID, name, discordgo.MessageApplicationCommand),
		Name:        name,
		CommandType: discordgo.MessageApplicationCommand,
		TargetID:    target.ID,
		Resolved: &discordgo.ApplicationCommandInteractionDataResolved{
			Messages: map[string]*discordgo.Message{target.ID: target},
		},
	}
	i := f.interaction(discordgo.InteractionApplicationCommand, guildID, channelID, user, permissions, data)
	f.registerInteraction(i)
	return i
}

// ComponentClick builds an INTERACTION_CREATE for a button press with
// customID on message, which is usually a message the bot sent (see
// StoredMessage); when message is nil a bare bot message stands in.
func (f *Fake) ComponentClick(guildID, channelID string, user *discordgo.User, permissions int64, customID string, message *discordgo.Message) *discordgo.Interaction {
	if message == nil {
		message = &discordgo.Message{
			ID:        f.NewSnowflake(),
			ChannelID: channelID,
			GuildID:   guildID,
			Author:    f.BotUser(),
			Timestamp: time.Now().UTC(),
		}
	}
	data := discordgo.MessageComponentInteractionData{
		CustomID:      customID,
		ComponentType: discordgo.ButtonComponent,
	}
	i := f.interaction(discordgo.InteractionMessageComponent, guildID, channelID, user, permissions, data)
	i.Message = message
	f.registerInteraction(i)
	return i
}

// ComponentSelect builds an INTERACTION_CREATE for a choice in a select menu with customID
// on message (see ComponentClick): kind is the menu's type (string, role, channel…) and
// values what the member chose, as Discord sends them.
func (f *Fake) ComponentSelect(guildID, channelID string, user *discordgo.User, permissions int64, customID string,
	kind discordgo.ComponentType, values []string, message *discordgo.Message) *discordgo.Interaction {
	i := f.ComponentClick(guildID, channelID, user, permissions, customID, message)
	i.Data = discordgo.MessageComponentInteractionData{CustomID: customID, ComponentType: kind, Values: values}
	f.registerInteraction(i)
	return i
}

// WithLocale sets the language of the member's client on i (and, in a guild, the server's
// preferred locale when guild is not empty), as Discord reports them.
func WithLocale(i *discordgo.Interaction, user, guild discordgo.Locale) *discordgo.Interaction {
	i.Locale = user
	if guild != "" && i.GuildID != "" {
		i.GuildLocale = &guild
	}
	return i
}

// commandID finds the ID Discord assigned to a command in the last bulk
// overwrite (guild first, then global), or makes one up.
func (f *Fake) commandID(guildID, name string, typ discordgo.ApplicationCommandType) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, scope := range []string{guildID, ""} {
		for _, c := range f.commands[scope] {
			if c.Name == name && c.Type == typ {
				return c.ID
			}
		}
	}
	return f.NewSnowflake()
}

// attachment is a file the fake serves, as Discord's CDN would.
type attachment struct {
	contentType string
	data        []byte
}

// AddAttachment makes the fake serve data and returns the attachment to put
// in a message or in an interaction's resolved attachments (as for an
// import command's file option). Its URL points at the fake.
func (f *Fake) AddAttachment(channelID, filename, contentType string, data []byte) *discordgo.MessageAttachment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.uploadLocked(channelID, File{Name: filename, ContentType: contentType, Data: data})
}

// uploadLocked stores an uploaded file and returns its attachment.
func (f *Fake) uploadLocked(channelID string, file File) *discordgo.MessageAttachment {
	id := f.NewSnowflake()
	path := "/attachments/" + channelID + "/" + id + "/" + url.PathEscape(file.Name)
	f.attachments["/attachments/"+channelID+"/"+id+"/"+file.Name] = attachment{contentType: file.ContentType, data: file.Data}
	u := strings.TrimSuffix(f.URL(), "/") + path
	return &discordgo.MessageAttachment{
		ID:          id,
		URL:         u,
		ProxyURL:    u,
		Filename:    file.Name,
		ContentType: file.ContentType,
		Size:        len(file.Data),
	}
}

// getAttachment serves uploaded and added attachments.
func (f *Fake) getAttachment(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a, ok := f.attachments[r.URL.Path]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if a.contentType != "" {
		w.Header().Set("Content-Type", a.contentType)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(a.data)))
	_, _ = w.Write(a.data)
}
