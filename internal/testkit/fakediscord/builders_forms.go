package fakediscord

import (
	"sort"

	"github.com/bwmarrin/discordgo"
)

// Builders of the interactions that come from what a member types: autocomplete requests
// and submitted modals.

// Autocomplete builds an INTERACTION_CREATE for an autocomplete request of a chat input
// command: data carries the options typed so far, the one being typed marked Focused (its
// value is the text typed, as Discord sends it).
func (f *Fake) Autocomplete(guildID, channelID string, user *discordgo.User, permissions int64, data discordgo.ApplicationCommandInteractionData) *discordgo.Interaction {
	if data.CommandType == 0 {
		data.CommandType = discordgo.ChatApplicationCommand
	}
	if data.ID == "" {
		data.ID = f.commandID(guildID, data.Name, data.CommandType)
	}
	i := f.interaction(discordgo.InteractionApplicationCommandAutocomplete, guildID, channelID, user, permissions, data)
	f.registerInteraction(i)
	return i
}

// ModalSubmit builds an INTERACTION_CREATE for a submitted modal with customID, whose text
// inputs hold values (by their custom IDs), one input per action row as Discord sends
// them. message is the message whose button opened the modal, or nil for a modal opened
// by a command.
func (f *Fake) ModalSubmit(guildID, channelID string, user *discordgo.User, permissions int64, customID string, values map[string]string, message *discordgo.Message) *discordgo.Interaction {
	ids := make([]string, 0, len(values))
	for id := range values {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	data := discordgo.ModalSubmitInteractionData{CustomID: customID}
	for _, id := range ids {
		data.Components = append(data.Components, &discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			&discordgo.TextInput{CustomID: id, Value: values[id]}}})
	}
	i := f.interaction(discordgo.InteractionModalSubmit, guildID, channelID, user, permissions, data)
	i.Message = message
	f.registerInteraction(i)
	return i
}
