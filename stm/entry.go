package stm

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits from the memory model (SPEC §2). They are constants, not options,
// because prompts and tool descriptions quote them to the model.
const (
	// MaxMessages is how many crude messages one entry keeps; the oldest is
	// evicted first so the entry always holds the latest exchange.
	MaxMessages = 10

	// MaxSummaryChars is the longest summary, counted in characters (runes)
	// as a person or the model would count them, not in bytes.
	MaxSummaryChars = 1500

	// MaxMessageChars caps one crude message. Discord allows 4000 characters
	// per message with Nitro, and a long reply is captured whole even when
	// the bot sent it as several Discord messages; the cap keeps the memory
	// held by a full cache bounded. Longer content is truncated, not
	// rejected, because passive capture has nobody to report an error to.
	MaxMessageChars = 4000
)

var (
	// ErrSummaryTooLong is returned by SetSummary for a summary over
	// MaxSummaryChars. The summary is rejected rather than truncated because
	// the model writes it through a tool: an error naming the length lets it
	// shorten the summary itself, while a silent cut would lose the end.
	ErrSummaryTooLong = errors.New("summary too long")

	// ErrInvalidMessage is returned by Append for a message whose role is
	// neither RoleUser nor RoleAssistant; the context builder replays roles
	// to the chat model, which accepts no others.
	ErrInvalidMessage = errors.New("invalid short-term memory message")
)

// Role says who wrote a crude message. The values are the chat-completion
// role names so the context builder can pass them through unchanged.
type Role string

// Roles of a crude message.
const (
	// RoleUser marks a message written by a Discord user.
	RoleUser Role = "user"
	// RoleAssistant marks a reply written by the bot.
	RoleAssistant Role = "assistant"
)

// Message is one crude message of a conversation.
type Message struct {
	// AuthorID is the Discord user ID of the author; ClearUser uses it to
	// remove a user's messages from channel-shared entries.
	AuthorID string
	// AuthorName is the display name at the time of the message, kept so
	// the context can say who spoke without another lookup.
	AuthorName string
	Role       Role
	Content    string
	// InReplyTo is, for a reply of the bot, the user it answered. Replies
	// repeat what they answer, so ClearUser removes them with the user's
	// own messages.
	InReplyTo string
	// SentAt is when the message was sent; Append fills it from the store's
	// clock when zero.
	SentAt time.Time
	// MessageID is the Discord message, for a user's message, so that a
	// deleted or edited message can be removed or replaced (RemoveMessages,
	// ReplaceMessage). Empty for the bot's replies and terminal chats.
	MessageID string
}

// Entry is a snapshot of one short-term memory entry. Expired parts are
// already removed: Messages is empty once the crude messages expired and
// Summary is empty once the summary expired. The slices belong to the caller.
type Entry struct {
	Key Key
	// Messages are the crude messages, oldest first.
	Messages []Message
	// MessagesUpdatedAt is the last Append, from which the crude TTL runs;
	// MessagesExpireAt is when the messages will be dropped. Both are zero
	// when there are no messages.
	MessagesUpdatedAt time.Time
	MessagesExpireAt  time.Time
	// Summary is the model-written summary of the conversation so far.
	Summary string
	// SummaryUpdatedAt is the last SetSummary, from which the summary TTL
	// runs; SummaryExpiresAt is when the summary will be dropped. Both are
	// zero when there is no summary.
	SummaryUpdatedAt time.Time
	SummaryExpiresAt time.Time
}

// View returns what the context builder should inject for this entry: the
// summary when there is one, since the model wrote it to stand for the whole
// conversation, else the crude messages.
func (e Entry) View() View {
	if e.Summary != "" {
		return View{Summary: e.Summary}
	}
	return View{Messages: e.Messages}
}

// View is the part of an entry that goes into the prompt: exactly one of
// Summary and Messages is set, or neither when nothing is remembered.
type View struct {
	Summary  string
	Messages []Message
}

// IsZero reports whether the view holds nothing to inject.
func (v View) IsZero() bool { return v.Summary == "" && len(v.Messages) == 0 }

// validateMessage rejects roles the chat model would not accept.
func validateMessage(m Message) error {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return fmt.Errorf("%w: role %q", ErrInvalidMessage, m.Role)
	}
	return nil
}

// truncateRunes cuts s to at most n runes without splitting a multi-byte
// character, so Japanese text is never left with a broken last rune.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s // at most n bytes is at most n runes
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

// countRunes counts characters the way MaxSummaryChars is specified.
func countRunes(s string) int { return utf8.RuneCountInString(s) }
