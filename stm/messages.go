package stm

import (
	"slices"
	"time"
)

// RemoveMessages removes the messages with the given Discord message ids from every entry
// of one channel (its shared entry and each user's entry there; guildID is empty for a
// DM), and drops a summary written from any of them, since it may quote them. It returns
// how many messages it removed. A deleted Discord message leaves short-term memory this
// way (SPEC §2 "Deleted messages").
func (s *Store) RemoveMessages(guildID, channelID string, messageIDs ...string) int {
	ids := nonEmpty(messageIDs)
	if channelID == "" || len(ids) == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	removed := 0
	s.channelEntries(guildID, channelID, now, func(key Key, e *entry) {
		before := len(e.messages)
		e.messages = slices.DeleteFunc(e.messages, func(m Message) bool {
			return m.MessageID != "" && slices.Contains(ids, m.MessageID)
		})
		removed += before - len(e.messages)
		if len(e.messages) == 0 {
			e.messages, e.messagesAt = nil, time.Time{}
		}
		dropSummaryOf(e, ids)
		s.removeIfEmpty(key, e)
	})
	return removed
}

// ReplaceMessage replaces the content of the message with the given Discord message id in
// every entry of one channel, for an edited message, and drops a summary written from it,
// since it may quote the old words. Content longer than MaxMessageChars is truncated. It
// returns how many copies it replaced; the crude TTL is not restarted, because an edit is
// not a new message.
func (s *Store) ReplaceMessage(guildID, channelID, messageID, content string) int {
	if channelID == "" || messageID == "" {
		return 0
	}
	content = truncateRunes(content, MaxMessageChars)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	replaced := 0
	s.channelEntries(guildID, channelID, now, func(key Key, e *entry) {
		for i := range e.messages {
			if e.messages[i].MessageID == messageID {
				e.messages[i].Content = content
				replaced++
			}
		}
		dropSummaryOf(e, []string{messageID})
		s.removeIfEmpty(key, e)
	})
	return replaced
}

// channelEntries calls fn with every live entry of one channel. Like ClearChannel it scans
// the keys: deletes and edits of captured messages are rare, and a pass over at most
// Capacity keys takes well under a millisecond.
func (s *Store) channelEntries(guildID, channelID string, now time.Time, fn func(Key, *entry)) {
	for _, key := range s.entries.Keys() {
		if key.GuildID != guildID || key.ChannelID != channelID {
			continue
		}
		if e := s.peek(key, now); e != nil {
			fn(key, e)
		}
	}
}

// summaryMessages lists the message ids a summary about to be written on e is made from:
// e's messages and, when e has a summary now (which the new one rewrites), that one's.
func summaryMessages(e *entry) []string {
	var out []string
	if e.summary != "" {
		out = append(out, e.summaryMsgs...)
	}
	for _, m := range e.messages {
		if m.MessageID != "" {
			out = append(out, m.MessageID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dropSummaryOf removes e's summary when it was written from any of the messages ids.
func dropSummaryOf(e *entry, ids []string) {
	if e.summary == "" {
		return
	}
	for _, id := range ids {
		if _, found := slices.BinarySearch(e.summaryMsgs, id); found {
			e.summary, e.summaryAt, e.summaryOf, e.summaryMsgs = "", time.Time{}, nil, nil
			return
		}
	}
}

func nonEmpty(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}
