// Package fakediscord is a Discord API and gateway on loopback for end-to-end
// tests that drive a real *discordgo.Session.
//
// The fake speaks enough of the REST API (under /api/v9 and /api/v10) and of
// the gateway websocket (HELLO, IDENTIFY → READY, heartbeats, RESUME,
// dispatches) for a bot to connect, receive MESSAGE_CREATE and
// INTERACTION_CREATE events and answer them. Every HTTP request is recorded
// with its decoded body so tests can assert on the exact JSON discordgo put on
// the wire, and tests wait for recorded events through condition
// notifications instead of sleeping.
//
// A session reaches the fake by routing its HTTP client at URL() (see
// bot.NewHTTPClient); the gateway URL then comes from GET /gateway, so no
// discordgo package variable is modified and tests may run in parallel.
//
// The fake is stricter than a mock and close to Discord where it matters for
// a bot: unknown channels, messages and interaction tokens answer with
// Discord's error codes, an interaction can be acknowledged only once, and
// follow-ups need an acknowledged interaction. Routes it does not implement
// answer 404 and are reported by Unhandled (and, unless AllowUnhandled is
// given, fail the test at cleanup) so a missing route is noticed.
//
// It also serves Discord's OAuth2 for "Sign in with Discord" (oauth.go): the authorize
// page at /oauth2/authorize, granting for the member a test chose with AuthorizeAs, the
// token exchange with PKCE, and /users/@me and /users/@me/guilds for a bearer token.
//
// Sharded clients (IDENTIFY with shard [id, count], count > 1) each get READY and
// GUILD_CREATE for their shard's guilds only, and every dispatch goes to the shard of
// its guild, (guild_id >> 22) % count, DMs to shard 0 (shards.go); GET /gateway/bot
// recommends WithRecommendedShards. DropGateway and RequestHeartbeat act on an unsharded
// client only.
//
// Close the discordgo session before the fake shuts down (register its
// cleanup after calling New), and only after WaitReady returned: a session
// that loses its gateway, or races its first heartbeat with Close, reconnects
// in the background forever.
package fakediscord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// Defaults for the bot the fake plays. Discord gives a bot user the same ID
// as its application, so the defaults do too.
const (
	DefaultBotUserID     = "1200000000000000001"
	DefaultBotUsername   = "kioku"
	DefaultApplicationID = DefaultBotUserID
	// DefaultHeartbeatInterval is what Discord currently sends in HELLO.
	// Tests should keep it: discordgo sends its first heartbeat right after
	// connecting anyway, and a short interval lets its heartbeat goroutine
	// race Session.Close into a reconnect.
	DefaultHeartbeatInterval = 41250 * time.Millisecond
)

// errClosed is returned by waits and dispatches once the fake has shut down.
var errClosed = errors.New("fakediscord: closed")

// Option configures a Fake in New.
type Option func(*Fake)

// WithBotUser sets the ID and username of the bot user returned by
// GET /users/@me and in READY.
func WithBotUser(id, username string) Option {
	return func(f *Fake) {
		f.botUser.ID = id
		f.botUser.Username = username
	}
}

// WithApplicationID sets the application ID sent in READY, stamped on
// interactions and expected in command and webhook routes.
func WithApplicationID(id string) Option {
	return func(f *Fake) { f.appID = id }
}

// WithHeartbeatInterval sets the interval announced in HELLO. See
// DefaultHeartbeatInterval before shortening it.
func WithHeartbeatInterval(d time.Duration) Option {
	return func(f *Fake) { f.heartbeatInterval = d }
}

// WithRecommendedShards sets the shard count GET /gateway/bot recommends (default 1), as
// Discord does for a bot in many servers.
func WithRecommendedShards(n int) Option {
	return func(f *Fake) { f.recommendedShards = n }
}

// AllowUnhandled stops the fake from failing the test at cleanup when the
// client called routes the fake does not implement. They are still recorded
// and listed by Unhandled.
func AllowUnhandled() Option {
	return func(f *Fake) { f.allowUnhandled = true }
}

// Fake is a Discord API and gateway served on loopback. All methods are safe
// for concurrent use. Values returned by accessors are snapshots or are never
// modified after being recorded; treat them as read-only.
type Fake struct {
	tb       testing.TB
	srv      *httptest.Server
	mux      *http.ServeMux
	upgrader websocket.Upgrader

	// Fixed by New and read without locking.
	botUser           discordgo.User
	appID             string
	heartbeatInterval time.Duration
	allowUnhandled    bool
	recommendedShards int

	lastID atomic.Int64 // snowflake sequence, see NewSnowflake

	// wg counts gateway connection goroutines, which httptest.Server.Close
	// does not wait for because their connections are hijacked.
	wg sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every recorded change
	closed  bool

	requests      []Request
	forgotten     int       // requests dropped by Forget; Index counts them too
	lostUnhandled []Request // unhandled requests among them, still reported at Close
	failures      []*failure
	messages      map[string][]*SentMessage // channel ID → created messages
	edits         map[string][]*SentMessage // channel ID → message edits
	deleted       map[string][]string       // channel ID → deleted message IDs
	typing        map[string]int            // channel ID → typing calls
	responses     []*InteractionResponse
	followups     []*SentMessage
	originalEdits []*SentMessage
	commands      map[string][]*discordgo.ApplicationCommand // guild ID ("" global) → last bulk overwrite

	channels     map[string]*discordgo.Channel
	guilds       map[string]*discordgo.Guild
	guildOrder   []string
	members      map[string]map[string]*discordgo.Member // guild ID → user ID → member
	stored       map[string]*discordgo.Message           // message ID → current state
	interactions map[string]*interactionState            // token → state
	attachments  map[string]attachment                   // URL path → content
	oauth        oauthState                              // OAuth2 for "Sign in with Discord" (oauth.go)

	conns   map[*gatewayConn]struct{}
	current *gatewayConn // identified or resumed connection events go to
	session *gatewaySession
	// shards holds the connections that identified as one shard of several, by shard id;
	// once there is one, events go to the shard of their guild (shards.go).
	shards      map[int]*shardLink
	connections int
	identifies  []Identify
	// rejectIdentify, when not 0, is the close code the next IDENTIFY gets (RejectIdentify).
	rejectIdentify int
	resumes        int
	replayed       int
	received       []GatewayPayload
	heartbeats     int
	acks           int
}

// New starts a fake Discord for the duration of the test; it shuts down in
// tb.Cleanup.
func New(tb testing.TB, opts ...Option) *Fake {
	tb.Helper()
	f := &Fake{
		tb:                tb,
		botUser:           discordgo.User{ID: DefaultBotUserID, Username: DefaultBotUsername, Discriminator: "0", Bot: true},
		appID:             DefaultApplicationID,
		heartbeatInterval: DefaultHeartbeatInterval,
		changed:           make(chan struct{}),
		messages:          map[string][]*SentMessage{},
		edits:             map[string][]*SentMessage{},
		deleted:           map[string][]string{},
		typing:            map[string]int{},
		commands:          map[string][]*discordgo.ApplicationCommand{},
		channels:          map[string]*discordgo.Channel{},
		guilds:            map[string]*discordgo.Guild{},
		members:           map[string]map[string]*discordgo.Member{},
		stored:            map[string]*discordgo.Message{},
		interactions:      map[string]*interactionState{},
		attachments:       map[string]attachment{},
		conns:             map[*gatewayConn]struct{}{},
		shards:            map[int]*shardLink{},
		recommendedShards: 1,
		upgrader: websocket.Upgrader{
			// The client is a bot, not a browser; there is no origin to check.
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
	for _, opt := range opts {
		opt(f)
	}
	// Snowflakes carry a creation time; starting the sequence at a fixed
	// instant keeps IDs deterministic and lets the bot read sane timestamps.
	f.lastID.Store(snowflakeAt(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))

	f.mux = http.NewServeMux()
	f.routes()
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	tb.Cleanup(f.Close)
	return f
}

// URL returns the API base URL to configure as KIOKU_DISCORD_API_URL, such
// as "http://127.0.0.1:PORT/".
func (f *Fake) URL() string { return f.srv.URL + "/" }

// GatewayURL returns the websocket URL the fake hands out from GET /gateway.
func (f *Fake) GatewayURL() string {
	return "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/gateway"
}

// BotUser returns a copy of the bot user the fake plays.
func (f *Fake) BotUser() *discordgo.User {
	u := f.botUser
	return &u
}

// ApplicationID returns the bot's application ID.
func (f *Fake) ApplicationID() string { return f.appID }

// Close disconnects gateway clients and stops the server. It runs in the
// test's cleanup; calling it earlier simulates Discord going away. Close is
// idempotent.
func (f *Fake) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	conns := make([]*gatewayConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	unhandled := f.unhandledLocked()
	f.notifyLocked()
	f.mu.Unlock()

	for _, c := range conns {
		c.close(websocket.CloseGoingAway)
	}
	f.wg.Wait()
	f.srv.Close()

	if len(unhandled) > 0 && !f.allowUnhandled {
		var b strings.Builder
		for _, r := range unhandled {
			fmt.Fprintf(&b, "\n\t%s %s", r.Method, r.URLPath)
		}
		f.tb.Errorf("fakediscord: client called routes the fake does not implement:%s", b.String())
	}
}

// notifyLocked wakes everything blocked in a wait. f.mu must be held.
func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// WaitUntil blocks until cond returns true, re-evaluating it whenever the
// fake records something. cond runs without the fake's lock held, so it may
// call any accessor. It returns an error when ctx ends first or the fake is
// closed.
func (f *Fake) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		changed, closed := f.changed, f.closed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return errClosed
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fakediscord: gave up waiting: %w", context.Cause(ctx))
		case <-changed:
		}
	}
}

// WaitReady blocks until a client has identified (or resumed) on the
// gateway (with sharded clients: every shard of the count they identified with), READY (followed by a GUILD_CREATE for each guild set with
// SetGuild) has been sent, and the client's first heartbeat was acknowledged.
//
// The heartbeat matters for shutdown: discordgo's heartbeat goroutine sends
// its first beat without checking whether the session was closed meanwhile,
// so a session closed right after Open fails that write and reconnects in
// the background forever. Once WaitReady returns, Session.Close is clean.
func (f *Fake) WaitReady(ctx context.Context) error {
	return f.WaitUntil(ctx, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.shards) > 0 {
			return f.allShardsReadyLocked()
		}
		return f.current != nil && f.current.acks > 0
	})
}

// NewSnowflake returns a fresh, increasing Discord ID for test fixtures.
func (f *Fake) NewSnowflake() string {
	return fmt.Sprint(f.lastID.Add(1))
}

// discordEpoch is the zero of snowflake timestamps.
var discordEpoch = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)

// snowflakeAt returns the smallest snowflake created at t.
func snowflakeAt(t time.Time) int64 {
	return t.Sub(discordEpoch).Milliseconds() << 22
}
