package pipeline

import (
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// Flags are the five switches of SPEC §4 that decide what the pipeline may do. The
// operator sets one set for the whole bot (Config.Flags) and each guild picks a mode with
// /kioku config; the two combine to the more restrictive (see And).
type Flags struct {
	// Enabled runs extraction at all. Off: turns are not extracted (the cursor still
	// moves, so turning it on later does not mine old conversations).
	Enabled bool `json:"enabled"`
	// ShadowMode records every proposal in history as "shadow" and applies none: a way
	// to watch what the pipeline would do before trusting it.
	ShadowMode bool `json:"shadow_mode"`
	// MutationsFrozen stops UPDATE and DELETE from being applied (ADD still is); an
	// emergency brake for a model that rewrites too eagerly.
	MutationsFrozen bool `json:"mutations_frozen"`
	// AllowUpdateDelete lets decisions change and forget existing memories. Without it the
	// pipeline only adds (controlled mode).
	AllowUpdateDelete bool `json:"allow_update_delete"`
	// AutonomousFrozen stops every autonomous write; proposals are recorded as "blocked".
	// It differs from ShadowMode in intent: shadow is a chosen way of running, frozen is
	// a halt pulled when something looks wrong.
	AutonomousFrozen bool `json:"autonomous_frozen"`
}

// DefaultFlags is full mode: enabled, updates and deletes allowed, nothing frozen.
func DefaultFlags() Flags { return Flags{Enabled: true, AllowUpdateDelete: true} }

// GuildFlags maps a guild's /kioku config pipeline mode onto the flags. An empty or
// unknown value is the default, full.
func GuildFlags(mode string) Flags {
	f := DefaultFlags()
	switch mode {
	case ltm.PipelineControlled:
		f.AllowUpdateDelete = false
	case ltm.PipelineShadow:
		f.ShadowMode = true
	case ltm.PipelineOff:
		f.Enabled = false
	}
	return f
}

// And combines two sets of flags into the more restrictive of each.
func (f Flags) And(g Flags) Flags {
	return Flags{
		Enabled:           f.Enabled && g.Enabled,
		ShadowMode:        f.ShadowMode || g.ShadowMode,
		MutationsFrozen:   f.MutationsFrozen || g.MutationsFrozen,
		AllowUpdateDelete: f.AllowUpdateDelete && g.AllowUpdateDelete,
		AutonomousFrozen:  f.AutonomousFrozen || g.AutonomousFrozen,
	}
}

// Mode is the effective behaviour the flags add up to.
type Mode string

// Effective modes, from most to least restrictive.
const (
	ModeOff        Mode = "off"        // nothing is extracted
	ModeFrozen     Mode = "frozen"     // proposals recorded as blocked, none applied
	ModeShadow     Mode = "shadow"     // proposals recorded as shadow, none applied
	ModeControlled Mode = "controlled" // ADD applied; UPDATE and DELETE recorded as blocked
	ModeFull       Mode = "full"       // ADD, UPDATE and DELETE applied
)

// Mode returns the effective mode of f.
func (f Flags) Mode() Mode {
	switch {
	case !f.Enabled:
		return ModeOff
	case f.AutonomousFrozen:
		return ModeFrozen
	case f.ShadowMode:
		return ModeShadow
	case f.MutationsFrozen || !f.AllowUpdateDelete:
		return ModeControlled
	}
	return ModeFull
}

// gate says how mode m treats a valid, confident proposal: "" to apply it, or the history
// action to record it under instead, with the reason.
func (m Mode) gate(a ltm.ProposalAction) (memory.Action, string) {
	switch m {
	case ModeOff, ModeFrozen:
		return memory.ActionBlock, "autonomous writes are frozen"
	case ModeShadow:
		return memory.ActionShadow, "shadow mode: recorded, not applied"
	case ModeControlled:
		if a == ltm.ProposeUpdate || a == ltm.ProposeDelete {
			return memory.ActionBlock, "controlled mode: updates and deletes are not applied"
		}
	}
	return "", ""
}

// GuildModes lists the pipeline modes a guild can choose, with a line each for
// /kioku config.
var GuildModes = []struct{ Value, Description string }{
	{ltm.PipelineFull, "add, update and forget memories from conversations (default)"},
	{ltm.PipelineControlled, "only add memories; proposed edits and deletions are recorded, not applied"},
	{ltm.PipelineShadow, "record what would be remembered in history, change nothing"},
	{ltm.PipelineOff, "don't extract memories from conversations"},
}
