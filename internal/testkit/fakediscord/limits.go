package fakediscord

import (
	"fmt"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Discord's documented limits on what a message, an embed, a component, an autocomplete
// answer and a modal may carry. The fake refuses a body past any of them with 400 Invalid
// Form Body, as Discord does, so a test that passes knows Discord would accept it.
const (
	LimitContent         = 2000
	LimitEmbeds          = 10
	LimitEmbedTitle      = 256
	LimitEmbedDesc       = 4096
	LimitEmbedFields     = 25
	LimitEmbedFieldName  = 256
	LimitEmbedFieldValue = 1024
	LimitEmbedFooter     = 2048
	LimitEmbedTotal      = 6000
	LimitActionRows      = 5
	LimitRowComponents   = 5
	LimitCustomID        = 100
	LimitButtonLabel     = 80
	LimitChoices         = 25
	LimitChoiceName      = 100
	LimitModalTitle      = 45
	LimitTextInputLabel  = 45
	LimitTextInputValue  = 4000
)

func runes(s string) int { return utf8.RuneCountInString(s) }

// checkMessageLimits reports the first limit m breaks, or nil.
func checkMessageLimits(m *SentMessage) error {
	if n := runes(m.Content); n > LimitContent {
		return fmt.Errorf("content: %d characters, at most %d", n, LimitContent)
	}
	if len(m.Embeds) > LimitEmbeds {
		return fmt.Errorf("embeds: %d, at most %d", len(m.Embeds), LimitEmbeds)
	}
	total := 0
	for i, e := range m.Embeds {
		n, err := embedSize(e)
		if err != nil {
			return fmt.Errorf("embeds.%d: %w", i, err)
		}
		total += n
	}
	if total > LimitEmbedTotal {
		return fmt.Errorf("embeds: %d characters in all, at most %d", total, LimitEmbedTotal)
	}
	return checkComponents(m.Components)
}

// embedSize checks one embed's limits and returns the characters Discord counts.
func embedSize(e *discordgo.MessageEmbed) (int, error) {
	if e == nil {
		return 0, nil
	}
	if runes(e.Title) > LimitEmbedTitle {
		return 0, fmt.Errorf("title: %d characters, at most %d", runes(e.Title), LimitEmbedTitle)
	}
	if runes(e.Description) > LimitEmbedDesc {
		return 0, fmt.Errorf("description: %d characters, at most %d", runes(e.Description), LimitEmbedDesc)
	}
	if len(e.Fields) > LimitEmbedFields {
		return 0, fmt.Errorf("fields: %d, at most %d", len(e.Fields), LimitEmbedFields)
	}
	n := runes(e.Title) + runes(e.Description)
	for j, f := range e.Fields {
		if f == nil {
			continue
		}
		if runes(f.Name) == 0 || runes(f.Name) > LimitEmbedFieldName {
			return 0, fmt.Errorf("fields.%d.name: %d characters, want 1–%d", j, runes(f.Name), LimitEmbedFieldName)
		}
		if runes(f.Value) == 0 || runes(f.Value) > LimitEmbedFieldValue {
			return 0, fmt.Errorf("fields.%d.value: %d characters, want 1–%d", j, runes(f.Value), LimitEmbedFieldValue)
		}
		n += runes(f.Name) + runes(f.Value)
	}
	if e.Footer != nil {
		if runes(e.Footer.Text) > LimitEmbedFooter {
			return 0, fmt.Errorf("footer: %d characters, at most %d", runes(e.Footer.Text), LimitEmbedFooter)
		}
		n += runes(e.Footer.Text)
	}
	if e.Author != nil {
		n += runes(e.Author.Name)
	}
	return n, nil
}

// checkComponents checks the action rows of a message or a modal.
func checkComponents(cs []discordgo.MessageComponent) error {
	if len(cs) > LimitActionRows {
		return fmt.Errorf("components: %d action rows, at most %d", len(cs), LimitActionRows)
	}
	for i, c := range cs {
		row, ok := c.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		if len(row.Components) > LimitRowComponents {
			return fmt.Errorf("components.%d: %d components, at most %d", i, len(row.Components), LimitRowComponents)
		}
		for j, inner := range row.Components {
			var id, label string
			switch v := inner.(type) {
			case *discordgo.Button:
				id, label = v.CustomID, v.Label
				if runes(label) > LimitButtonLabel {
					return fmt.Errorf("components.%d.%d.label: %d characters, at most %d", i, j, runes(label), LimitButtonLabel)
				}
			case *discordgo.SelectMenu:
				id = v.CustomID
			case *discordgo.TextInput:
				id, label = v.CustomID, v.Label
				if runes(label) > LimitTextInputLabel {
					return fmt.Errorf("components.%d.%d.label: %d characters, at most %d", i, j, runes(label), LimitTextInputLabel)
				}
				if runes(v.Value) > LimitTextInputValue {
					return fmt.Errorf("components.%d.%d.value: %d characters, at most %d", i, j, runes(v.Value), LimitTextInputValue)
				}
			}
			if runes(id) > LimitCustomID {
				return fmt.Errorf("components.%d.%d.custom_id: %d characters, at most %d", i, j, runes(id), LimitCustomID)
			}
		}
	}
	return nil
}

// checkCallbackLimits checks what only interaction callbacks carry: autocomplete choices
// and a modal's title.
func checkCallbackLimits(typ discordgo.InteractionResponseType, choices []*discordgo.ApplicationCommandOptionChoice, title string) error {
	switch typ {
	case discordgo.InteractionApplicationCommandAutocompleteResult:
		if len(choices) > LimitChoices {
			return fmt.Errorf("choices: %d, at most %d", len(choices), LimitChoices)
		}
		for i, c := range choices {
			if n := runes(c.Name); n == 0 || n > LimitChoiceName {
				return fmt.Errorf("choices.%d.name: %d characters, want 1–%d", i, n, LimitChoiceName)
			}
		}
	case discordgo.InteractionResponseModal:
		if n := runes(title); n == 0 || n > LimitModalTitle {
			return fmt.Errorf("title: %d characters, want 1–%d", n, LimitModalTitle)
		}
	}
	return nil
}
