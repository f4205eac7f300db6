package pipeline

import (
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

// ModeFlags maps a pipeline mode (the operator's KIOKU_PIPELINE_MODE or a guild's
// /kioku config choice) onto the flags. An empty or unknown value is the default, full.
func ModeFlags(mode memory.PipelineMode) Flags {
	f := DefaultFlags()
	switch mode {
	case memory.PipelineControlled:
		f.AllowUpdateDelete = false
	case memory.PipelineShadow:
		f.ShadowMode = true
	case memory.PipelineFrozen:
		f.AutonomousFrozen = true
	case memory.PipelineOff:
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

// Mode returns the effective mode the flags add up to.
func (f Flags) Mode() memory.PipelineMode {
	switch {
	case !f.Enabled:
		return memory.PipelineOff
	case f.AutonomousFrozen:
		return memory.PipelineFrozen
	case f.ShadowMode:
		return memory.PipelineShadow
	case f.MutationsFrozen || !f.AllowUpdateDelete:
		return memory.PipelineControlled
	}
	return memory.PipelineFull
}

// gate says how mode m treats a valid, confident proposal: "" to apply it, or the history
// action to record it under instead, with the reason.
func gate(m memory.PipelineMode, a memory.ProposalAction) (memory.Action, string) {
	switch m {
	case memory.PipelineOff, memory.PipelineFrozen:
		return memory.ActionBlock, "autonomous writes are frozen"
	case memory.PipelineShadow:
		return memory.ActionShadow, "shadow mode: recorded, not applied"
	case memory.PipelineControlled:
		if a == memory.ProposeUpdate || a == memory.ProposeDelete || a.Replaces() {
			return memory.ActionBlock, "controlled mode: updates and deletes are not applied"
		}
	}
	return "", ""
}
