package bot

// Autocomplete of the id option of /memory show, edit, forget, history, recover and undo:
// the memories the caller could name with that command, matched against what they type.
// The scope is the command's own (the scope option, else server memory in a server and
// personal memory in DMs), the caller's personal memory is only ever their own, and the
// channel rules of recall apply, so a suggestion shows nothing /memory search would not.

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// autocompleted are the commands whose id option is completed; recover completes from
// forgotten memories.
var autocompleted = map[string]bool{
	"memory show": true, "memory edit": true, "memory forget": true, "memory history": true,
	"memory recover": true, "memory undo": true,
}

// autocompleteScan is how many of the newest memories are searched for an id typed as
// digits: ids are matched by prefix, which no index helps with.
const autocompleteScan = 500

// autocomplete answers an autocomplete interaction. One that asks for no option kioku
// completes is left unanswered; a failure answers no choices (Discord shows "no options")
// and is logged, since the member is still typing.
func (b router) autocomplete(ctx context.Context, c *call) {
	focused := focusedOption(c.command.Options)
	if focused == nil || focused.Name != "id" || !autocompleted[c.key] {
		return
	}
	choices, err := memoryCommands(b).idChoices(ctx, c, focusedText(focused))
	if err != nil {
		c.log.Warn("autocomplete failed", "key", c.key, "err", err)
		choices = nil
	}
	// No choices makes Discord show "no options", which is the answer.
	if err := c.b.session.InteractionRespond(c.i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices},
	}, discordgo.WithContext(ctx)); err != nil {
		c.log.Error("couldn't answer autocomplete", "key", c.key, "err", err)
	}
}

// focusedOption finds the option being typed, in the subcommand or at the top.
func focusedOption(opts []*discordgo.ApplicationCommandInteractionDataOption) *discordgo.ApplicationCommandInteractionDataOption {
	for _, o := range opts {
		if o == nil {
			continue
		}
		if o.Focused {
			return o
		}
		if f := focusedOption(o.Options); f != nil {
			return f
		}
	}
	return nil
}

// focusedText is what the member typed so far. Discord sends it as a string for every
// option type while it is being typed.
func focusedText(o *discordgo.ApplicationCommandInteractionDataOption) string {
	switch v := o.Value.(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatInt(int64(v), 10)
	}
	return ""
}

// idChoices are up to 25 memories the caller may name with c's command, newest first,
// whose content contains typed (or, when typed is a number, whose id starts with it).
func (b memoryCommands) idChoices(ctx context.Context, c *call, typed string) ([]*discordgo.ApplicationCommandOptionChoice, error) {
	owner, err := c.owner()
	if err != nil {
		// A scope that does not exist here (server memory in DMs) has nothing to offer.
		return nil, nil
	}
	opt := memory.ListOptions{Limit: limChoices, Audience: c.audience(ctx), Deleted: c.key == "memory recover"}
	digits := strings.TrimPrefix(typed, "#")
	numeric := digits != "" && strings.Trim(digits, "0123456789") == ""
	if numeric {
		opt.Limit = autocompleteScan
	} else {
		opt.Contains = typed
	}
	mems, _, err := b.store.Memories.List(ctx, owner, opt)
	if err != nil {
		return nil, err
	}
	var out []*discordgo.ApplicationCommandOptionChoice
	for _, m := range mems {
		if len(out) == limChoices {
			break
		}
		if numeric && !strings.HasPrefix(strconv.FormatInt(m.ID, 10), digits) && !strings.Contains(m.Content, digits) {
			continue
		}
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: choiceName(m), Value: m.ID})
	}
	return out, nil
}

// choiceName shows a memory in the suggestion list: its number and the start of its
// content on one line, at most 100 characters, cut on a character boundary.
func choiceName(m *memory.Memory) string {
	name := "#" + strconv.FormatInt(m.ID, 10) + " · " + strings.Join(strings.Fields(m.Content), " ")
	if utf8.RuneCountInString(name) <= limChoiceName {
		return name
	}
	r := []rune(name)
	return string(r[:limChoiceName-1]) + "…"
}
