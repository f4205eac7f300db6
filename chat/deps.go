package chat

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
	"github.com/sashabaranov/go-openai"
)

// The parts an Engine works with, as the interfaces this package declares for them: the
// store's aggregates, short-term memory and the chat model satisfy them, and cmd/kioku wires
// them in (Deps).

// ChatModel completes chat requests with tools; *llm.Client satisfies it.
type ChatModel interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Memories is the part of long-term memory a turn reads and changes: what the tools write
// and the pinned memories every prompt carries. The store's Memories satisfy it.
type Memories interface {
	tools.MemoryWriter
	List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error)
	PinnedVersion(ctx context.Context, owner memory.Owner) (int64, error)
}

// Recaller finds the memories relevant to a turn; the store's Recall satisfies it.
type Recaller interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}

// Transcript is the stored conversation: a turn appends its words and reads the recent
// past of its channel. The store's Transcripts satisfy it.
type Transcript interface {
	AppendTurn(ctx context.Context, t memory.Turn) (int64, error)
	RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error)
}

// Settings are the members' and guild's choices a turn honours; the store's Settings
// satisfy it.
type Settings interface {
	UserSettings(ctx context.Context, userID string) (memory.UserSettings, error)
	UsersSettings(ctx context.Context, ids []string) (map[string]memory.UserSettings, error)
	GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error)
}

// ShortTerm is the part of the short-term store a turn uses; *stm.Store satisfies it.
type ShortTerm interface {
	tools.ShortTerm
	Append(key stm.Key, msg stm.Message) error
	Context(key stm.Key) stm.View
}

// TurnHook is told about each user turn once it is durably in the transcript, so
// background work (the memory pipeline's extraction, SPEC §4) can be scheduled from it.
// highSignal is true when the intent gate fired or the message carries decision or
// preference language (intent.HighSignal). (*pipeline.Pipeline).OnTurn has this shape;
// a func type keeps chat from depending on the pipeline.
type TurnHook func(ctx context.Context, t memory.Turn, highSignal bool) error

// Deps are the parts an Engine works with.
type Deps struct {
	Memories Memories
	// Duplicates find the memory a save says again in other words (the store's Duplicates).
	Duplicates tools.Duplicates
	Recall     Recaller
	Transcript Transcript
	Settings   Settings
	ShortTerm  ShortTerm
	Model      ChatModel
	// OnTurn, when set, is called after each user turn is stored and before the model is
	// asked anything. Its failure is logged and never fails the turn: the words are
	// already saved, and the pipeline's sweep schedules channels whose hook was missed.
	// Turns that are not stored (privacy full, rate limited, empty) do not call it.
	OnTurn TurnHook
}
