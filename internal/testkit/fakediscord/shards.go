package fakediscord

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// shardLink is the gateway connection of one shard of a sharded bot and the session a
// RESUME on that shard refers to. Guarded by Fake.mu.
type shardLink struct {
	conn      *gatewayConn // nil while the shard is disconnected
	session   *gatewaySession
	id, count int
}

// ShardOf returns the shard that receives the events of guildID when a bot runs count
// shards: (guild_id >> 22) % count, Discord's formula. DMs (guildID "") belong to shard 0,
// as on Discord.
func ShardOf(guildID string, count int) int {
	if guildID == "" || count <= 1 {
		return 0
	}
	id, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return 0
	}
	return int((id >> 22) % uint64(count))
}

// Shards returns the shard ids connected now (identified or resumed as one shard of
// several), for tests that check which shards a bot runs.
func (f *Fake) Shards() map[int]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int]int, len(f.shards))
	for id, l := range f.shards {
		if l.conn != nil {
			out[id] = l.count
		}
	}
	return out
}

// allShardsReadyLocked reports whether every shard of the count the sharded clients
// identified with is connected and had a heartbeat acknowledged. f.mu must be held.
func (f *Fake) allShardsReadyLocked() bool {
	count := 0
	for _, l := range f.shards {
		count = max(count, l.count)
	}
	for id := range count {
		l := f.shards[id]
		if l == nil || l.conn == nil || l.conn.acks == 0 {
			return false
		}
	}
	return true
}

// shardSessionLocked returns the shard whose session is id, or nil. f.mu must be held.
func (f *Fake) shardSessionLocked(id string) *shardLink {
	for _, l := range f.shards {
		if l.session.id == id {
			return l
		}
	}
	return nil
}

// resumeShardLocked continues a shard's session on c: the events after seq again, then
// RESUMED. f.mu must be held; it is released here.
func (f *Fake) resumeShardLocked(c *gatewayConn, l *shardLink, seq int64) error {
	s := l.session
	missed := s.log.after(seq)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	l.conn = c
	f.resumes++
	f.replayed += len(missed)
	f.notifyLocked()
	f.mu.Unlock()
	for _, raw := range missed {
		if err := c.writeLocked(raw); err != nil {
			return err
		}
	}
	next := s.seq.Add(1)
	resumed := "RESUMED"
	raw, err := json.Marshal(payload{Op: opDispatch, Data: json.RawMessage("{}"), Seq: &next, Type: &resumed})
	if err != nil {
		return err
	}
	s.log.add(next, raw)
	return c.writeLocked(raw)
}

// dispatchSharded sends an event to the shard its guild belongs to, as Discord does: a
// sharded bot gets each guild's events on exactly one connection.
func (f *Fake) dispatchSharded(eventType string, raw json.RawMessage) error {
	guildID, err := eventGuildID(eventType, raw)
	if err != nil {
		return err
	}
	f.mu.Lock()
	closed := f.closed
	var link *shardLink
	for _, l := range f.shards {
		if ShardOf(guildID, l.count) == l.id {
			link = l
			break
		}
	}
	var c *gatewayConn
	var s *gatewaySession
	if link != nil {
		c, s = link.conn, link.session
	}
	f.mu.Unlock()
	if closed {
		return errClosed
	}
	if c == nil {
		return ErrNoGateway
	}
	if err := c.dispatch(s, eventType, raw); err != nil {
		return fmt.Errorf("fakediscord: couldn't send %s: %w", eventType, err)
	}
	return nil
}

// eventGuildID reads the guild an event belongs to: "id" for the guild events, "guild_id"
// for the others; "" (a DM) when there is none.
func eventGuildID(eventType string, raw json.RawMessage) (string, error) {
	var body struct {
		ID      string `json:"id"`
		GuildID string `json:"guild_id"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return "", fmt.Errorf("fakediscord: couldn't read the guild of %s: %w", eventType, err)
	}
	switch eventType {
	case "GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE":
		return body.ID, nil
	}
	return body.GuildID, nil
}
