package memory

import "strings"

// PipelineMode is what the background pipeline may do (SPEC §4). The operator sets one for
// the whole bot (KIOKU_PIPELINE_MODE) and each guild may narrow it with /kioku config; the
// pipeline runs in the more restrictive of the two.
type PipelineMode string

// Pipeline modes, from most to least restrictive.
const (
	PipelineOff        PipelineMode = "off"        // nothing is extracted
	PipelineFrozen     PipelineMode = "frozen"     // proposals recorded as blocked, none applied; operator only
	PipelineShadow     PipelineMode = "shadow"     // proposals recorded as shadow, none applied
	PipelineControlled PipelineMode = "controlled" // ADD applied; UPDATE and DELETE recorded as blocked
	PipelineFull       PipelineMode = "full"       // ADD, UPDATE and DELETE applied
)

// GuildPipelineModes are the modes a guild can choose with /kioku config, the default
// first. Frozen is the operator's halt and not among them.
var GuildPipelineModes = []PipelineMode{PipelineFull, PipelineControlled, PipelineShadow, PipelineOff}

// ParsePipelineMode reads an operator's mode, in any letter case.
func ParsePipelineMode(s string) (PipelineMode, error) {
	m := PipelineMode(strings.ToLower(s))
	switch m {
	case PipelineOff, PipelineFrozen, PipelineShadow, PipelineControlled, PipelineFull:
		return m, nil
	}
	return "", Errorf(EINVALID, "Unknown pipeline mode %q: use full, controlled, shadow, frozen or off.", s)
}

// ValidateGuild checks that a guild may choose m and returns it, the default (full) for "".
func (m PipelineMode) ValidateGuild() (PipelineMode, error) {
	switch m {
	case PipelineFull, PipelineControlled, PipelineShadow, PipelineOff:
		return m, nil
	case "":
		return PipelineFull, nil
	}
	return "", Errorf(EINVALID, "Unknown pipeline mode %q: use full, controlled, shadow or off.", string(m))
}
