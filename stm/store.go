// Package stm holds short-term memory: the last few messages of a
// conversation and an optional model-written summary, kept in process and
// forgotten after a few hours (SPEC §2).
//
// Each guild channel has one entry shared by everyone in it and one entry per
// user; a DM has only the user's entry. Keys include the guild, so an entry
// captured in one server is never read in another, and reads take an exact
// Key, so a caller can only see another user's entry by building that user's
// key on purpose.
//
// The store does not know privacy levels: the chat turn must not call Append
// for a user at the `full` level, and "forget me" calls ClearUser.
package stm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Defaults for Options.
const (
	// DefaultCapacity is how many entries a Store keeps before evicting the
	// least recently used: one shared entry plus a few user entries for each
	// of a few thousand active channels, a few tens of megabytes at most.
	DefaultCapacity = 10_000

	// DefaultMessageTTL is how long crude messages live after the entry's
	// last Append (SPEC §2): long enough to span a day's pauses in a chat,
	// short enough that yesterday's small talk does not steer today.
	DefaultMessageTTL = 12 * time.Hour

	// DefaultSummaryTTL is how long a summary lives after the last
	// SetSummary (SPEC §2). It outlives the crude messages because the model
	// chose what to keep in it.
	DefaultSummaryTTL = 24 * time.Hour
)

// Options configures a Store. Zero fields take the defaults.
type Options struct {
	// Capacity is the maximum number of entries. Default DefaultCapacity.
	Capacity int
	// MessageTTL is how long crude messages live after the last Append.
	// Default DefaultMessageTTL.
	MessageTTL time.Duration
	// SummaryTTL is how long a summary lives after the last SetSummary.
	// Default DefaultSummaryTTL.
	SummaryTTL time.Duration
	// Now is the clock every TTL is measured with. Default time.Now; tests
	// pass a hand-driven clock so expiry is checked without sleeping.
	Now func() time.Time
}

// Store is the short-term memory of one bot process. It is safe for
// concurrent use.
type Store struct {
	messageTTL time.Duration
	summaryTTL time.Duration
	now        func() time.Time

	// mu guards entries and every *entry in it. The cache is the
	// non-thread-safe simplelru rather than lru.Cache because Append and
	// SetSummary are read-modify-write and must hold one lock across the
	// lookup and the update anyway. The expirable LRU is not used because it
	// reads the wall clock itself and has one TTL per entry, while an entry
	// here has two parts expiring on their own schedules against an
	// injectable clock; expiry is checked on access instead and the
	// capacity bounds what expired entries can hold on to.
	mu      sync.Mutex
	entries *simplelru.LRU[Key, *entry]
}

// entry is the mutable state behind an Entry; it is only touched with
// Store.mu held and never handed out.
type entry struct {
	messages   []Message
	messagesAt time.Time
	summary    string
	summaryAt  time.Time
	// summaryOf lists the users the summary may speak about: the authors
	// of the messages it was written from, the people the bot answered in
	// them, the speaker who asked for it and, since a summary rewrites the
	// previous one, that one's users too. ClearUser drops a shared summary
	// whose list names the user being forgotten.
	summaryOf []string
	// summaryMsgs lists the ids of the messages the summary was written
	// from, its predecessor's included; deleting or editing one of them
	// drops the summary, which may quote the old words.
	summaryMsgs []string
}

// New returns an empty Store configured by opts.
func New(opts Options) (*Store, error) {
	if opts.Capacity < 0 || opts.MessageTTL < 0 || opts.SummaryTTL < 0 {
		return nil, fmt.Errorf("couldn't create short-term memory: negative capacity or TTL in %+v", opts)
	}
	s := &Store{
		messageTTL: cmp.Or(opts.MessageTTL, DefaultMessageTTL),
		summaryTTL: cmp.Or(opts.SummaryTTL, DefaultSummaryTTL),
		now:        opts.Now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	entries, err := simplelru.NewLRU[Key, *entry](cmp.Or(opts.Capacity, DefaultCapacity), nil)
	if err != nil {
		return nil, fmt.Errorf("couldn't create short-term memory: %w", err)
	}
	s.entries = entries
	return s, nil
}

// Append adds msg to the entry at key, evicting the oldest message beyond
// MaxMessages, and restarts the crude TTL. Messages that had already expired
// are dropped first, never revived by the new one. Content longer than
// MaxMessageChars is truncated. It returns ErrInvalidKey for an invalid key,
// including a DM ChannelKey, and ErrInvalidMessage for an unknown role.
func (s *Store) Append(key Key, msg Message) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := validateMessage(msg); err != nil {
		return err
	}
	msg.Content = truncateRunes(msg.Content, MaxMessageChars)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if msg.SentAt.IsZero() {
		msg.SentAt = now
	}
	e := s.getOrCreate(key, now)
	if e.summary != "" && msg.MessageID != "" && !e.summaryAt.Before(msg.SentAt) {
		// The summary was written after this message was sent, during its turn
		// (capture comes last), so it may quote it.
		e.summaryMsgs = append(e.summaryMsgs, msg.MessageID)
		slices.Sort(e.summaryMsgs)
	}
	if len(e.messages) == MaxMessages {
		// Shift in place: at ten elements a copy is cheaper than a ring
		// buffer's bookkeeping and keeps the slice in order for snapshots.
		copy(e.messages, e.messages[1:])
		e.messages[MaxMessages-1] = msg
	} else {
		e.messages = append(e.messages, msg)
	}
	e.messagesAt = now
	return nil
}

// SetSummary replaces the summary of the entry at key and restarts the
// summary TTL; the crude messages are kept for when the summary expires.
// Surrounding whitespace is trimmed, and an empty summary removes the
// current one. A summary over MaxSummaryChars is rejected with
// ErrSummaryTooLong, whose message gives the length and the limit.
// speakers are users the summary may be about beyond the authors of the
// entry's messages, typically the user whose turn wrote it and whose
// message is not captured yet; "forget me" by any of them drops it.
func (s *Store) SetSummary(key Key, summary string, speakers ...string) error {
	return s.SetSummaryFrom(key, summary, speakers, nil)
}

// SetSummaryFrom is SetSummary for a summary written from messages beyond the entry's own:
// the message being answered (captured only after its turn) and older turns of the
// conversation the prompt quoted. Deleting or editing any of messageIDs drops the summary,
// as it does for the entry's messages.
func (s *Store) SetSummaryFrom(key Key, summary string, speakers, messageIDs []string) error {
	if err := key.Validate(); err != nil {
		return err
	}
	summary = strings.TrimSpace(summary)
	if n := countRunes(summary); n > MaxSummaryChars {
		return fmt.Errorf("%w: %d characters, the limit is %d", ErrSummaryTooLong, n, MaxSummaryChars)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if summary == "" {
		if e := s.get(key, now); e != nil {
			e.summary, e.summaryAt, e.summaryOf = "", time.Time{}, nil
			s.removeIfEmpty(key, e)
		}
		return nil
	}
	e := s.getOrCreate(key, now)
	of := append(e.summaryOf[:0:0], speakers...)
	if e.summary != "" {
		of = append(of, e.summaryOf...)
	}
	for _, m := range e.messages {
		of = append(of, m.AuthorID, m.InReplyTo)
	}
	slices.Sort(of)
	of = slices.Compact(of)
	if len(of) > 0 && of[0] == "" {
		of = of[1:]
	}
	msgs := append(summaryMessages(e), nonEmpty(messageIDs)...)
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	e.summary, e.summaryAt, e.summaryOf = summary, now, of
	e.summaryMsgs = msgs
	return nil
}

// Get returns a snapshot of the entry at exactly key, without its expired
// parts, and false when nothing unexpired is stored there or key is invalid.
func (s *Store) Get(key Key) (Entry, bool) {
	if key.Validate() != nil {
		return Entry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.get(key, s.now())
	if e == nil {
		return Entry{}, false
	}
	return s.snapshot(key, e), true
}

// Context returns what the context builder should inject for key: the
// summary when present and unexpired, else the crude messages, else the zero
// View.
func (s *Store) Context(key Key) View {
	e, _ := s.Get(key)
	return e.View()
}

// ForUser returns snapshots of every unexpired entry of userID, in any guild
// or DM, most recently updated first, for showing a user what the bot holds
// about them. Channel-shared entries are not included: they hold other
// people's messages too. An empty userID returns nil.
func (s *Store) ForUser(userID string) []Entry {
	if userID == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Entry
	for _, key := range s.entries.Keys() {
		if key.UserID != userID {
			continue
		}
		if e := s.peek(key, now); e != nil {
			out = append(out, s.snapshot(key, e))
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(
			lastUpdate(b).Compare(lastUpdate(a)),
			cmp.Compare(a.Key.GuildID, b.Key.GuildID),
			cmp.Compare(a.Key.ChannelID, b.Key.ChannelID),
		)
	})
	return out
}

// Len is the number of entries held, for the operator's metrics. Expired entries that
// nothing has read or pushed out since count too: they hold memory until then.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries.Len()
}

// Remove deletes the entry at exactly key and reports whether it held
// anything unexpired.
func (s *Store) Remove(key Key) bool {
	if key.Validate() != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.peek(key, s.now()) != nil
	s.entries.Remove(key)
	return live
}

// ClearChannel removes the shared entry of a channel and every user's entry
// in it, and returns how many of them held anything unexpired. guildID is
// empty for a DM channel.
func (s *Store) ClearChannel(guildID, channelID string) int {
	if channelID == "" {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cleared := 0
	// A scan rather than an index per channel: clearing is a rare command
	// and a pass over at most Capacity keys takes well under a millisecond.
	for _, key := range s.entries.Keys() {
		if key.GuildID != guildID || key.ChannelID != channelID {
			continue
		}
		if s.peek(key, now) != nil {
			cleared++
		}
		s.entries.Remove(key)
	}
	return cleared
}

// ClearUser forgets userID everywhere: it removes every entry of that user in
// every guild and DM, and returns how many of them held anything unexpired.
// From every other entry (channel-shared ones, and other users' own entries,
// whose summary may quote the user through a memory it was written from) it
// removes the user's messages, the bot's replies to them, and a summary written
// while the user took part or from their words (a summary cannot be split by
// author, and "forget me" must leave none of their words behind), so other
// people's messages stay. An empty userID clears nothing.
func (s *Store) ClearUser(userID string) int {
	if userID == "" {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cleared := 0
	for _, key := range s.entries.Keys() {
		switch {
		case key.UserID == userID:
			if s.peek(key, now) != nil {
				cleared++
			}
			s.entries.Remove(key)
		default:
			e := s.peek(key, now)
			if e == nil {
				continue
			}
			e.messages = slices.DeleteFunc(e.messages, func(m Message) bool {
				return m.AuthorID == userID || m.InReplyTo == userID
			})
			if len(e.messages) == 0 {
				e.messages, e.messagesAt = nil, time.Time{}
			}
			if slices.Contains(e.summaryOf, userID) {
				e.summary, e.summaryAt, e.summaryOf = "", time.Time{}, nil
			}
			s.removeIfEmpty(key, e)
		}
	}
	return cleared
}

// get returns the live entry at key, marking it recently used, after
// dropping its expired parts; nil when nothing unexpired is left.
func (s *Store) get(key Key, now time.Time) *entry {
	e, ok := s.entries.Get(key)
	if !ok {
		return nil
	}
	return s.expire(key, e, now)
}

// peek is get without marking the entry recently used, for scans that
// should not keep every entry they look at from being evicted.
func (s *Store) peek(key Key, now time.Time) *entry {
	e, ok := s.entries.Peek(key)
	if !ok {
		return nil
	}
	return s.expire(key, e, now)
}

// getOrCreate returns the live entry at key, adding an empty one if needed.
func (s *Store) getOrCreate(key Key, now time.Time) *entry {
	if e := s.get(key, now); e != nil {
		return e
	}
	e := &entry{}
	s.entries.Add(key, e)
	return e
}

// expire drops the parts of e whose TTL has run out, removing e from the
// cache and returning nil when nothing is left. An instant exactly one TTL
// after the update counts as expired.
func (s *Store) expire(key Key, e *entry, now time.Time) *entry {
	if len(e.messages) > 0 && !now.Before(e.messagesAt.Add(s.messageTTL)) {
		e.messages, e.messagesAt = nil, time.Time{}
	}
	if e.summary != "" && !now.Before(e.summaryAt.Add(s.summaryTTL)) {
		e.summary, e.summaryAt, e.summaryOf = "", time.Time{}, nil
	}
	if s.removeIfEmpty(key, e) {
		return nil
	}
	return e
}

// removeIfEmpty removes an entry with neither messages nor summary so empty
// entries do not take cache slots, and reports whether it did.
func (s *Store) removeIfEmpty(key Key, e *entry) bool {
	if len(e.messages) > 0 || e.summary != "" {
		return false
	}
	s.entries.Remove(key)
	return true
}

// snapshot copies e into an Entry the caller may keep and modify.
func (s *Store) snapshot(key Key, e *entry) Entry {
	out := Entry{Key: key, Summary: e.summary}
	if len(e.messages) > 0 {
		out.Messages = slices.Clone(e.messages)
		out.MessagesUpdatedAt = e.messagesAt
		out.MessagesExpireAt = e.messagesAt.Add(s.messageTTL)
	}
	if e.summary != "" {
		out.SummaryUpdatedAt = e.summaryAt
		out.SummaryExpiresAt = e.summaryAt.Add(s.summaryTTL)
	}
	return out
}

// lastUpdate is the later of an entry's two update times.
func lastUpdate(e Entry) time.Time {
	if e.SummaryUpdatedAt.After(e.MessagesUpdatedAt) {
		return e.SummaryUpdatedAt
	}
	return e.MessagesUpdatedAt
}
