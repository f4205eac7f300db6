package web

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
)

// The store's parts "My memory" uses beyond listing and forgetting: forget-me, the
// member's transcript turns and their privacy level.

// ForgetMe is forget-me with its preview, as /memory forget-me does it.
// *ltm.Confirmations satisfies it.
type ForgetMe interface {
	PreviewForgetMe(ctx context.Context, userID string) (memory.ForgetMeSummary, error)
	ConfirmForgetMe(ctx context.Context, userID, token string) (memory.ForgetMeSummary, error)
}

// Turns are the member's transcript turns still held. *ltm.Transcripts satisfies it.
type Turns interface {
	CountTurns(ctx context.Context, userID string) (int, error)
	UserTurns(ctx context.Context, userID string, limit int) ([]memory.Turn, error)
}

// Privacy reads a member's privacy level, which decides whether they may change their
// memories by hand. *ltm.Settings satisfies it.
type Privacy interface {
	UserSettings(ctx context.Context, userID string) (memory.UserSettings, error)
}
