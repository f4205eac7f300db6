package ltm

import (
	"time"

	"github.com/kioku-bot/kioku/memory/recall"
)

// DefaultStages are the conversation-aware ranking stages recall runs (docs/recall.md gives
// the measurements behind each setting); Store.Stages starts as a copy.
var DefaultStages = recall.Stages{
	DateBoost:   1.0,
	DateHalo:    2 * 24 * time.Hour,
	PersonBoost: 0.5,
	GraphBoost:  0,
	GraphHop:    0.5,
	Lexicon:     0.5,
	CoMention:   0.1,
	Past:        0.3,
	Coverage:    0,
}
