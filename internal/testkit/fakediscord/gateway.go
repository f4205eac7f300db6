package fakediscord

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// Gateway opcodes the fake speaks.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// gatewayWriteTimeout bounds a write to a client that stopped reading, so a
// wedged test fails instead of hanging.
const gatewayWriteTimeout = 10 * time.Second

// gatewaySession is what a RESUME refers to: an ID and the sequence of the
// last dispatch sent under it.
type gatewaySession struct {
	id  string
	seq atomic.Int64
	log sessionLog
	// dropped is set by DropGateway until the client resumes: events are then
	// kept for the RESUME instead of failing. Guarded by Fake.mu.
	dropped bool
}

// gatewayConn is one websocket client. Gorilla allows one concurrent writer,
// hence writeMu; it also keeps sequence numbers in wire order.
type gatewayConn struct {
	ws        *websocket.Conn
	writeMu   sync.Mutex
	closeOnce sync.Once

	acks int // heartbeats acknowledged on this connection, guarded by Fake.mu
}

// payload is a gateway frame as Discord sends it.
type payload struct {
	Op   int             `json:"op"`
	Data json.RawMessage `json:"d"`
	Seq  *int64          `json:"s"`
	Type *string         `json:"t"`
}

func (c *gatewayConn) write(p payload) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.writeLocked(raw)
}

func (c *gatewayConn) writeLocked(raw []byte) error {
	if err := c.ws.SetWriteDeadline(time.Now().Add(gatewayWriteTimeout)); err != nil {
		return err
	}
	// Plain text frames even though discordgo identifies with compress=true:
	// discordgo only inflates binary frames and reads text frames as JSON,
	// and Discord itself only compresses when asked through the URL.
	return c.ws.WriteMessage(websocket.TextMessage, raw)
}

// dispatch sends an op 0 event with the session's next sequence number.
func (c *gatewayConn) dispatch(s *gatewaySession, eventType string, data json.RawMessage) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	seq := s.seq.Add(1)
	raw, err := json.Marshal(payload{Op: opDispatch, Data: data, Seq: &seq, Type: &eventType})
	if err != nil {
		return err
	}
	s.log.add(seq, raw)
	return c.writeLocked(raw)
}

// close sends a close frame with code and closes the connection, which ends
// its read loop.
func (c *gatewayConn) close(code int) {
	c.closeOnce.Do(func() {
		// WriteControl may run concurrently with other writes.
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
		_ = c.ws.Close()
	})
}

// serveGateway upgrades to a websocket and runs the connection until the
// client or the fake closes it.
func (f *Fake) serveGateway(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		http.Error(w, "fake discord is closed", http.StatusServiceUnavailable)
		return
	}
	// Added under the lock so Close cannot be waiting already.
	f.wg.Add(1)
	f.mu.Unlock()
	defer f.wg.Done()

	ws, err := f.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader already answered with an error
	}
	c := &gatewayConn{ws: ws}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		c.close(websocket.CloseGoingAway)
		return
	}
	f.conns[c] = struct{}{}
	f.connections++
	f.notifyLocked()
	f.mu.Unlock()

	defer func() {
		c.close(websocket.CloseNormalClosure)
		f.mu.Lock()
		delete(f.conns, c)
		if f.current == c {
			f.current = nil
		}
		for _, l := range f.shards {
			if l.conn == c {
				l.conn = nil
			}
		}
		f.notifyLocked()
		f.mu.Unlock()
	}()

	hello, _ := json.Marshal(map[string]int64{"heartbeat_interval": f.heartbeatInterval.Milliseconds()})
	if err := c.write(payload{Op: opHello, Data: hello}); err != nil {
		return
	}
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return // closed by the client (Session.Close) or by the fake
		}
		var in payload
		if err := json.Unmarshal(raw, &in); err != nil {
			c.close(4002) // Discord's "decode error"
			return
		}
		f.mu.Lock()
		f.received = append(f.received, GatewayPayload{Op: in.Op, Data: in.Data})
		f.notifyLocked()
		f.mu.Unlock()

		switch in.Op {
		case opHeartbeat:
			err = f.ackHeartbeat(c)
		case opIdentify:
			err = f.identify(c, in.Data)
		case opResume:
			err = f.resume(c, in.Data)
		default:
			// Presence updates, member requests and the like need no answer
			// for the bot's purposes; they are recorded above.
		}
		if err != nil {
			return
		}
	}
}

func (f *Fake) ackHeartbeat(c *gatewayConn) error {
	f.mu.Lock()
	f.heartbeats++
	f.mu.Unlock()
	if err := c.write(payload{Op: opHeartbeatAck}); err != nil {
		return err
	}
	f.mu.Lock()
	f.acks++
	c.acks++
	f.notifyLocked()
	f.mu.Unlock()
	return nil
}

// identify starts a new gateway session: READY, then GUILD_CREATE for each
// guild as Discord does, and only then is the connection made current so a
// test's dispatch cannot overtake READY.
func (f *Fake) identify(c *gatewayConn, data json.RawMessage) error {
	var id Identify
	if err := json.Unmarshal(data, &id); err != nil {
		c.close(4002)
		return err
	}
	f.mu.Lock()
	reject := f.rejectIdentify
	f.rejectIdentify = 0
	f.mu.Unlock()
	if reject != 0 {
		c.close(reject)
		return fmt.Errorf("fakediscord: identify rejected with close %d", reject)
	}
	shardID, shardCount := 0, 1
	if id.Shard != nil {
		shardID, shardCount = id.Shard[0], id.Shard[1]
		if shardCount < 1 || shardID < 0 || shardID >= shardCount {
			c.close(4010) // Discord's "invalid shard"
			return fmt.Errorf("fakediscord: invalid shard %v", *id.Shard)
		}
	}
	s := &gatewaySession{id: "fake-session-" + f.NewSnowflake()}

	f.mu.Lock()
	f.identifies = append(f.identifies, id)
	stubs := make([]map[string]any, 0, len(f.guildOrder))
	guilds := make([]json.RawMessage, 0, len(f.guildOrder))
	for _, gid := range f.guildOrder {
		if ShardOf(gid, shardCount) != shardID {
			continue // Discord sends a shard only its own guilds
		}
		stubs = append(stubs, map[string]any{"id": gid, "unavailable": true})
		raw, err := json.Marshal(f.guildCreateLocked(gid))
		if err != nil {
			f.mu.Unlock()
			return err
		}
		guilds = append(guilds, raw)
	}
	f.mu.Unlock()

	bot := f.BotUser()
	ready, err := json.Marshal(map[string]any{
		"v":                  10,
		"user":               bot,
		"session_id":         s.id,
		"resume_gateway_url": f.GatewayURL(),
		"guilds":             stubs,
		"private_channels":   []any{},
		"application":        map[string]any{"id": f.appID, "flags": 0},
		"shard":              [2]int{shardID, shardCount},
	})
	if err != nil {
		return err
	}
	if err := c.dispatch(s, "READY", ready); err != nil {
		return err
	}
	for _, g := range guilds {
		if err := c.dispatch(s, "GUILD_CREATE", g); err != nil {
			return err
		}
	}

	f.mu.Lock()
	if shardCount > 1 {
		f.shards[shardID] = &shardLink{conn: c, session: s, id: shardID, count: shardCount}
	} else {
		f.session = s
		f.current = c
	}
	f.notifyLocked()
	f.mu.Unlock()
	return nil
}

// guildCreateLocked returns the GUILD_CREATE body for a guild: the guild with
// its channels and members, which discordgo's state caches.
func (f *Fake) guildCreateLocked(guildID string) *discordgo.Guild {
	g := cloneJSON(f.guilds[guildID])
	g.Channels = nil
	for _, ch := range f.channels {
		if ch.GuildID == guildID {
			g.Channels = append(g.Channels, cloneJSON(ch))
		}
	}
	g.Members = nil
	for _, m := range f.members[guildID] {
		g.Members = append(g.Members, cloneJSON(m))
	}
	return g
}

// resume continues the last session when the client names it: the events
// after the client's sequence number are sent again, then RESUMED, as Discord
// does. Anything else gets INVALID_SESSION (not resumable), after which
// discordgo identifies afresh on the same connection.
func (f *Fake) resume(c *gatewayConn, data json.RawMessage) error {
	var r struct {
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		c.close(4002)
		return err
	}
	f.mu.Lock()
	if l := f.shardSessionLocked(r.SessionID); l != nil {
		return f.resumeShardLocked(c, l, r.Seq)
	}
	s := f.session
	if s == nil || s.id != r.SessionID {
		f.mu.Unlock()
		return c.write(payload{Op: opInvalidSession, Data: json.RawMessage("false")})
	}
	// The connection becomes current while f.mu is held, and its writer is
	// held until the replay and RESUMED are out: an event dispatched meanwhile
	// is neither queued unseen nor sent ahead of the replay.
	missed := s.log.after(r.Seq)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	s.dropped = false
	f.resumes++
	f.replayed += len(missed)
	f.current = c
	f.notifyLocked()
	f.mu.Unlock()
	for _, raw := range missed {
		if err := c.writeLocked(raw); err != nil {
			return err
		}
	}
	seq := s.seq.Add(1)
	resumed := "RESUMED"
	raw, err := json.Marshal(payload{Op: opDispatch, Data: json.RawMessage("{}"), Seq: &seq, Type: &resumed})
	if err != nil {
		return err
	}
	s.log.add(seq, raw)
	return c.writeLocked(raw)
}

// Dispatch sends an event of the given type (such as "MESSAGE_CREATE") with
// data as its JSON body to the identified client. data may be a
// json.RawMessage. It fails when no client is ready (see WaitReady), except
// after DropGateway, when the event is kept for the client's RESUME.
func (f *Fake) Dispatch(eventType string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("fakediscord: couldn't encode %s: %w", eventType, err)
	}
	f.mu.Lock()
	if len(f.shards) > 0 {
		f.mu.Unlock()
		return f.dispatchSharded(eventType, raw)
	}
	c, s, closed := f.current, f.session, f.closed
	if c == nil && !closed && s != nil && s.dropped {
		// Kept for the client's RESUME, as Discord keeps a dropped session's events.
		defer f.mu.Unlock()
		return s.queueLocked(eventType, raw)
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

// DispatchMessage sends MESSAGE_CREATE for m, keeping its components. The
// fake remembers the message (for fetches and replies) and its channel, as a
// guild text channel when m.GuildID is set and a DM otherwise, unless the
// channel was set already.
func (f *Fake) DispatchMessage(m *discordgo.Message) error {
	raw, err := marshalMessage(m)
	if err != nil {
		return fmt.Errorf("fakediscord: couldn't encode MESSAGE_CREATE: %w", err)
	}
	f.mu.Lock()
	f.ensureChannelLocked(m.ChannelID, m.GuildID, m.Author)
	f.stored[m.ID] = cloneMessage(m)
	f.mu.Unlock()
	return f.Dispatch("MESSAGE_CREATE", raw)
}

// DispatchInteraction sends INTERACTION_CREATE for i. Interactions built with
// the fake's builders are already known; others are registered here so the
// client can answer them.
func (f *Fake) DispatchInteraction(i *discordgo.Interaction) error {
	raw, err := marshalInteraction(i)
	if err != nil {
		return fmt.Errorf("fakediscord: couldn't encode INTERACTION_CREATE: %w", err)
	}
	f.registerInteraction(i)
	return f.Dispatch("INTERACTION_CREATE", raw)
}

// RejectIdentify makes the gateway answer the next IDENTIFY by closing the connection with
// code, as Discord does for a bad token (4004, authentication failed) or a privileged intent
// the application has not enabled (4014, disallowed intents).
func (f *Fake) RejectIdentify(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rejectIdentify = code
}

// RequestHeartbeat sends op 1 to the client, which must answer with a
// heartbeat at once; tests use it to exercise heartbeat handling without a
// short heartbeat interval.
func (f *Fake) RequestHeartbeat() error {
	f.mu.Lock()
	c := f.current
	f.mu.Unlock()
	if c == nil {
		return ErrNoGateway
	}
	return c.write(payload{Op: opHeartbeat, Data: json.RawMessage("null")})
}

// DropGateway closes the current client's connection with a close code (4000
// is Discord's "unknown error", which clients may resume after), to test
// reconnects. discordgo reconnects after about a second and resumes. Events
// dispatched until then are kept and replayed on the RESUME, with any the
// client had not read when its connection went.
func (f *Fake) DropGateway(code int) error {
	f.mu.Lock()
	c := f.current
	f.current = nil
	if c != nil && f.session != nil {
		f.session.dropped = true
	}
	f.notifyLocked()
	f.mu.Unlock()
	if c == nil {
		return ErrNoGateway
	}
	c.close(code)
	return nil
}

// cloneJSON deep-copies a discordgo value through JSON so the fake and the
// test never share memory.
func cloneJSON[T any](v *T) *T {
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakediscord: couldn't copy %T: %v", v, err))
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		panic(fmt.Sprintf("fakediscord: couldn't copy %T: %v", v, err))
	}
	return out
}
