package bot

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// RememberThisCommand is the name of the message context menu command.
const RememberThisCommand = "Remember this"

// Custom ID prefixes of the bot's buttons. A custom ID carries all the state
// a press needs ("mem:page:server:20:fact", "mem:forget:personal:<token>"),
// so nothing is kept in process between a command and its buttons and a
// restart in between loses nothing. The owner of the memory is always taken
// from the person pressing, never from the custom ID.
const (
	idPage            = "mem:page"
	idForget          = "mem:forget"
	idCancel          = "mem:cancel"
	idForgetMeConfirm = "forgetme:confirm"
	idForgetMeCancel  = "forgetme:cancel"
)

// commandHandlers maps each command ("name" or "name subcommand") and
// button prefix to its handler. Commands that write memory or run recall
// are deferred first: with an embedding model configured, a write embeds the
// new content and a search embeds the query, which together can outlast
// Discord's three-second acknowledgement window on a slow provider.
func commandHandlers(m *memoryCommands, br *memoryBrowser, f *memoryForms, t *memoryTransfer, s *settingsCommands) map[string]commandHandler {
	return map[string]commandHandler{
		"memory list":       br.browseList,
		"memory search":     deferred(m.memorySearch),
		"memory show":       br.browseShow,
		"memory add":        f.memoryAddOrModal,
		"memory edit":       f.memoryEditOrModal,
		"memory forget":     deferred(m.memoryForget),
		"memory recover":    deferred(m.memoryRecover),
		"memory history":    m.memoryHistory,
		"memory undo":       deferred(m.memoryUndo),
		"memory export":     deferred(t.memoryExport),
		"memory import":     deferred(t.memoryImport),
		"memory forget-me":  m.memoryForgetMe,
		"privacy":           s.privacy,
		"stm show":          s.stmShow,
		"stm clear":         s.stmClear,
		"kioku config":      s.kiokuConfig,
		"kioku status":      s.kiokuStatus,
		"kioku jobs":        s.kiokuJobs,
		RememberThisCommand: deferred(m.rememberThis),
		idPage:              br.pagePress,
		idForget:            m.forgetPress,
		idCancel:            m.cancelPress,
		idForgetMeConfirm:   m.forgetMePress,
		idForgetMeCancel:    m.cancelPress,
		idConfigSet:         s.configPress,
	}
}

// deferred acknowledges the interaction before running h.
func deferred(h commandHandler) commandHandler {
	return func(ctx context.Context, c *call) (*response, error) {
		if err := c.deferReply(ctx); err != nil {
			return nil, err
		}
		return h(ctx, c)
	}
}

// Where commands may be used. /kioku configures a server, so it is not
// offered in DMs; everything else works in both.
var (
	everywhere = &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM}
	guildsOnly = &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild}
)

func scopeOption() *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{
		Type:        discordgo.ApplicationCommandOptionString,
		Name:        "scope",
		Description: "server (this server's shared memory, the default here) or personal (yours; the only one in DMs)",
		Choices: []*discordgo.ApplicationCommandOptionChoice{
			{Name: "server", Value: string(memory.ScopeServer)},
			{Name: "personal", Value: string(memory.ScopePersonal)},
		},
	}
}

func idOption(required bool) *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionInteger, Name: "id", Required: required,
		Description: "Memory number, as shown by /memory list (#42 → 42)", MinValue: ptr(1.0),
		// Suggestions from the memories the caller may name here (autocomplete.go).
		Autocomplete: true,
	}
}

func typeOption() *discordgo.ApplicationCommandOption {
	o := &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionString, Name: "type", Description: "Kind of memory",
	}
	for _, t := range memory.Types {
		o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: string(t), Value: string(t)})
	}
	return o
}

// timingOption keeps the time-bound memories still to come or already past (memory.Timing).
func timingOption() *discordgo.ApplicationCommandOption {
	o := &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionString, Name: "when", Description: "Only plans and events still to come, or past",
	}
	for _, t := range []memory.Timing{memory.TimingUpcoming, memory.TimingPast} {
		o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: string(t), Value: string(t)})
	}
	return o
}

// lifecycleOption keeps the memories in one lifecycle (memory.Lifecycle).
func lifecycleOption() *discordgo.ApplicationCommandOption {
	o := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: "lifecycle",
		Description: "Only memories in this lifecycle (default: all but superseded and archived)"}
	for _, l := range memory.Lifecycles {
		o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: string(l), Value: string(l)})
	}
	return o
}

func stringOption(name, description string, required bool, maxLen int) *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionString, Name: name, Description: description,
		Required: required, MaxLength: maxLen,
	}
}

func boolOption(name, description string) *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionBoolean, Name: name, Description: description}
}

func subcommand(name, description string, options ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
	if options == nil {
		// Discord rejects "options": null in a bulk overwrite.
		options = []*discordgo.ApplicationCommandOption{}
	}
	return &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionSubCommand, Name: name, Description: description, Options: options,
	}
}

func ptr[T any](v T) *T { return &v }

// Commands returns every application command kioku registers (SPEC §6),
// for a bulk overwrite, with their names and descriptions from the message catalogue in
// every language it has (locale.go).
func Commands() []*discordgo.ApplicationCommand {
	return localizeCommands(commandList())
}

func commandList() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{
		{
			Name:        "memory",
			Description: "See and manage what kioku remembers",
			Contexts:    everywhere,
			Options: []*discordgo.ApplicationCommandOption{
				subcommand("list", "List memories, newest first", scopeOption(), typeOption(),
					stringOption("tag", "Only memories with this tag", false, maxTagFilter),
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionUser, Name: "author",
						Description: "Only memories this member said or saved"},
					timingOption(), lifecycleOption()),
				subcommand("search", "Search memories",
					append([]*discordgo.ApplicationCommandOption{stringOption("query", "Words to look for", true, 200), scopeOption()},
						searchFilterOptions()...)...),
				subcommand("show", "Show one memory in full", idOption(true), scopeOption()),
				subcommand("add", "Remember something",
					stringOption("content", "What to remember (leave out to write it in a form)", false, memory.MaxContentRunes), scopeOption(), typeOption(),
					stringOption("tags", "Comma-separated tags", false, 200),
					boolOption("pinned", "Always keep this memory in mind")),
				subcommand("edit", "Change a memory (it keeps its history)", idOption(true),
					stringOption("content", "The new content", false, memory.MaxContentRunes), scopeOption(), typeOption(),
					stringOption("tags", "Comma-separated tags (replaces the old ones)", false, 200),
					boolOption("pinned", "Always keep this memory in mind")),
				subcommand("forget", "Forget a memory by id, or preview what matches a query",
					idOption(false), stringOption("query", "Forget memories matching these words (asks first)", false, 200), scopeOption()),
				subcommand("recover", "Bring back a forgotten memory", idOption(true), scopeOption()),
				subcommand("history", "Show every change made to a memory", idOption(true), scopeOption()),
				subcommand("undo", "Undo the last change to a memory: an edit, a forget or an add", idOption(true), scopeOption(),
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionInteger, Name: "version",
						Description: "Only if the memory is still at this version (the one the change made)", MinValue: ptr(1.0)}),
				subcommand("export", "Download memories as a JSON file", scopeOption()),
				subcommand("import", "Add memories from a kioku export file",
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionAttachment, Name: "file",
						Description: "A .json file made by /memory export", Required: true},
					scopeOption()),
				subcommand("review", "What waits for a decision: memories that conflict or repeat, changes kioku proposed",
					scopeOption()),
				subcommand("forget-me", "Erase everything kioku holds about you (asks first)"),
			},
		},
		{
			Name:        "privacy",
			Description: "See or set how kioku may use what it knows about you",
			Contexts:    everywhere,
			Options: []*discordgo.ApplicationCommandOption{
				{
					Type: discordgo.ApplicationCommandOptionString, Name: "level",
					Description: "normal; partial: no personal memory in replies; full: ignore me entirely",
					Choices: []*discordgo.ApplicationCommandOptionChoice{
						{Name: "normal", Value: string(memory.PrivacyNormal)},
						{Name: "partial", Value: string(memory.PrivacyPartial)},
						{Name: "full", Value: string(memory.PrivacyFull)},
					},
				},
				boolOption("cross_server", "Use my personal memories in every server I talk in"),
			},
		},
		{
			Name:        "stm",
			Description: "Short-term memory: the last messages kioku keeps for a few hours",
			Contexts:    everywhere,
			Options: []*discordgo.ApplicationCommandOption{
				subcommand("show", "Show what kioku keeps short-term about you"),
				subcommand("clear", "Clear short-term memory",
					&discordgo.ApplicationCommandOption{
						Type: discordgo.ApplicationCommandOptionString, Name: "what",
						Description: "me (yours, everywhere; the default) or channel (this channel, Manage Server)",
						Choices: []*discordgo.ApplicationCommandOptionChoice{
							{Name: "me", Value: "me"}, {Name: "channel", Value: "channel"},
						},
					}),
			},
		},
		{
			Name:        "kioku",
			Description: "Configure kioku in this server",
			Contexts:    guildsOnly,
			Options: []*discordgo.ApplicationCommandOption{
				subcommand("config", "Show or change settings (Manage Server)",
					boolOption("self_teaching", "Let the model save server memories on its own"),
					&discordgo.ApplicationCommandOption{
						Type: discordgo.ApplicationCommandOptionString, Name: "pipeline_mode",
						Description: "Background learning: full, controlled, shadow or off",
						Choices:     pipelineModeChoices(),
					},
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionChannel, Name: "auto_reply_add",
						Description: "Answer every message in this channel",
						ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildPublicThread,
							discordgo.ChannelTypeGuildPrivateThread}},
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionChannel, Name: "auto_reply_remove",
						Description: "Stop answering every message in this channel",
						ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildPublicThread,
							discordgo.ChannelTypeGuildPrivateThread}},
					stringOption("persona", "Persona prompt for this server", false, 4000),
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionRole, Name: "editor_role",
						Description: "Members with this role may edit server memory too"},
					languageOption(),
					boolOption("learning", "Learn from conversations in a channel (age-restricted channels start off)"),
					&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionChannel, Name: "learning_channel",
						Description: "The channel whose learning to switch (default: this one)",
						ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews,
							discordgo.ChannelTypeGuildForum, discordgo.ChannelTypeGuildVoice, discordgo.ChannelTypeGuildPublicThread,
							discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread}},
					&discordgo.ApplicationCommandOption{
						Type: discordgo.ApplicationCommandOptionString, Name: "reset",
						Description: "Clear one setting",
						Choices: []*discordgo.ApplicationCommandOptionChoice{
							{Name: "persona", Value: "persona"}, {Name: "editor_role", Value: "editor_role"},
							{Name: "auto_reply_channels", Value: "auto_reply_channels"},
						},
					}),
				subcommand("status", "Memory counts, background queue and health"),
				subcommand("jobs", "This server's background jobs (Manage Server)", &discordgo.ApplicationCommandOption{
					Type: discordgo.ApplicationCommandOptionString, Name: "state", Description: "Only jobs in this state (default: all)",
					Choices: jobStateOptionChoices(),
				}),
			},
		},
		{
			Name:     RememberThisCommand,
			Type:     discordgo.MessageApplicationCommand,
			Contexts: everywhere,
			// Context menu commands take no options, but the field must be a
			// list: Discord rejects "options": null.
			Options: []*discordgo.ApplicationCommandOption{},
		},
	}
}

// pipelineModeChoices offers the pipeline modes a guild may choose, each by its own name.
func pipelineModeChoices() []*discordgo.ApplicationCommandOptionChoice {
	out := make([]*discordgo.ApplicationCommandOptionChoice, 0, len(memory.GuildPipelineModes))
	for _, m := range memory.GuildPipelineModes {
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: string(m), Value: string(m)})
	}
	return out
}
