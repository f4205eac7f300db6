package bot

import (
	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// searchFilterOptions are the filter options of /memory search. Descriptions stay under
// Discord's 100 characters.
func searchFilterOptions() []*discordgo.ApplicationCommandOption {
	return []*discordgo.ApplicationCommandOption{
		typeOption(),
		stringOption("tag", "Only memories with this tag (several: comma-separated)", false, 200),
		stringOption("since", "From this date on: 2025-06-01, or an age such as 7d, 2w, 12h", false, 40),
		stringOption("until", "Up to this date (the whole day), or an age such as 30d", false, 40),
		boolOption("pinned", "Only pinned memories"),
		{Type: discordgo.ApplicationCommandOptionUser, Name: "author", Description: "Only memories this member said or saved"},
		{Type: discordgo.ApplicationCommandOptionNumber, Name: "min_score", Description: "Leave out matches scoring under this (0 to 1)",
			MinValue: ptr(0.0), MaxValue: 1},
		{Type: discordgo.ApplicationCommandOptionString, Name: "include", Description: "Also search superseded or archived memories",
			Choices: []*discordgo.ApplicationCommandOptionChoice{
				{Name: "superseded", Value: "superseded"}, {Name: "archived", Value: "archived"}, {Name: "both", Value: "both"}}},
		boolOption("explain", "Show why each memory is where it is"),
	}
}

// searchFilters puts the call's filter options into q; a bad value is an EINVALID error
// naming the option. Ages count back from now.
func (b memoryCommands) searchFilters(c *call, q *memory.SearchQuery) error {
	if t := c.options.str("type"); t != "" {
		q.Types = []memory.Type{memory.Type(t)}
	}
	q.Tags = splitTags(c.options.str("tag"))
	now := b.store.Now()
	var err error
	if q.Since, err = memory.ParseSearchDate("since", c.options.str("since"), now, false); err != nil {
		return err
	}
	if q.Until, err = memory.ParseSearchDate("until", c.options.str("until"), now, true); err != nil {
		return err
	}
	q.PinnedOnly, _ = c.options.boolean("pinned")
	q.AuthorID = c.options.str("author")
	q.MinScore, _ = c.options.number("min_score")
	q.Explain, _ = c.options.boolean("explain")
	switch inc := c.options.str("include"); inc {
	case "":
	case "both":
		q.Include = memory.ShelvedStates
	default:
		q.Include = []memory.State{memory.State(inc)}
	}
	return q.ValidateFilters()
}

// filtered reports whether q narrows the search by anything but its text and scope.
func filtered(q *memory.SearchQuery) bool {
	return len(q.Types) > 0 || len(q.Tags) > 0 || !q.Since.IsZero() || !q.Until.IsZero() || q.PinnedOnly ||
		q.AuthorID != "" || q.MinScore > 0 || len(q.Include) > 0
}
