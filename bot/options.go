package bot

import (
	"strings"

	"github.com/bwmarrin/discordgo"
)

// commandOptions are the options of a slash command (or of its subcommand) by name,
// read as the types Discord sends them.
type commandOptions map[string]*discordgo.ApplicationCommandInteractionDataOption

// has reports whether the option was given at all, whatever its value.
func (o commandOptions) has(name string) bool {
	_, ok := o[name]
	return ok
}

// str returns a string option (also channel, role and attachment ids) or "".
func (o commandOptions) str(name string) string {
	opt, ok := o[name]
	if !ok || opt == nil {
		return ""
	}
	if s, ok := opt.Value.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// integer returns an integer option and whether it was given.
func (o commandOptions) integer(name string) (int64, bool) {
	opt, ok := o[name]
	if !ok || opt == nil {
		return 0, false
	}
	// Discord sends JSON numbers; discordgo decodes them as float64.
	if f, ok := opt.Value.(float64); ok {
		return int64(f), true
	}
	return 0, false
}

// boolean returns a boolean option and whether it was given.
func (o commandOptions) boolean(name string) (bool, bool) {
	opt, ok := o[name]
	if !ok || opt == nil {
		return false, false
	}
	v, ok := opt.Value.(bool)
	return v, ok
}

// number returns a number option and whether it was given.
func (o commandOptions) number(name string) (float64, bool) {
	opt, ok := o[name]
	if !ok || opt == nil {
		return 0, false
	}
	f, ok := opt.Value.(float64)
	return f, ok
}
