package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/web"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The world the tests sign in to: a fake Discord whose OAuth2 application is the
// dashboard's, two servers (Alice and Bob are members of the first; only Bob of the second),
// and the first server's stored channel rules: #general every member reads, #mods only
// moderators.
const (
	clientID     = "1200000000000000001"
	clientSecret = "client-secret-9f8e7d6c"
	guildHome    = "300000000000000001"
	guildOther   = "300000000000000002"
	chanGeneral  = "400000000000000001"
	chanMods     = "400000000000000002"
	chanElse     = "400000000000000003"
	roleMod      = "500000000000000001"
)

// stores are the parts of one store (an engine's process) the dashboard and the tests use.
type stores struct {
	Sessions *ltm.Sessions
	Memories *ltm.Memories
	Channels *ltm.Channels
	Recall   *ltm.Recall
	Transfer *ltm.Transfer
	ForgetMe *ltm.Confirmations
	Turns    *ltm.Transcripts
	Settings *ltm.Settings
	// Review, Graph, Health, Jobs, Maintenance and Budgets serve the review, graph and
	// health pages.
	Review      *ltm.Review
	Graph       *ltm.Graph
	Health      *ltm.Health
	Jobs        *ltm.Jobs
	Maintenance *ltm.Maintenance
	Budgets     *ltm.Budgets
	Overview    *ltm.Overview
}

// testDailyLimit is the daily model budget of each server in the tests.
const testDailyLimit = 500

// engine opens one process's store over a database shared by every call: SQLite (a file
// of the test's) or PostgreSQL (a schema of the test's, when KIOKU_TEST_POSTGRES is set).
type engine struct {
	name string
	open func(t testing.TB) stores
}

// sqliteEngine opens stores over one SQLite file; path is where it lives.
func sqliteEngine(t testing.TB) (engine, string) {
	path := filepath.Join(t.TempDir(), "kioku.db")
	return engine{name: "SQLite", open: func(t testing.TB) stores {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return stores{s.Sessions, s.Memories, s.Channels, s.Recall, s.Transfer, s.Confirmations, s.Transcripts, s.Settings,
			s.Review, s.Graph, s.Health, s.Jobs, s.Maintenance, s.Budgets, s.Overview}
	}}, path
}

// engines are the engines a test runs on: SQLite always, PostgreSQL when configured.
func engines(t testing.TB) []engine {
	sq, _ := sqliteEngine(t)
	out := []engine{sq}
	if os.Getenv(pgtest.EnvURL) != "" {
		cfg := pgtest.Schema(t)
		out = append(out, engine{name: "PostgreSQL", open: func(t testing.TB) stores {
			s := pgtest.OpenConfig(t, cfg.Copy())
			return stores{s.Sessions, s.Memories, s.Channels, s.Recall, s.Transfer, s.Confirmations, s.Transcripts, s.Settings,
				s.Review, s.Graph, s.Health, s.Jobs, s.Maintenance, s.Budgets, s.Overview}
		}})
	}
	return out
}

// world is a fake Discord and the members and servers it knows.
type world struct {
	fake       *fakediscord.Fake
	alice, bob *discordgo.User
	// redirects are the dashboards' callback URLs, all registered with the application.
	redirects []string
}

func newWorld(t testing.TB) *world {
	f := fakediscord.New(t)
	w := &world{fake: f, alice: f.NewUser("alice"), bob: f.NewUser("bob")}
	f.SetGuild(&discordgo.Guild{ID: guildHome, Name: "Home", OwnerID: w.bob.ID})
	f.SetGuild(&discordgo.Guild{ID: guildOther, Name: "Elsewhere", OwnerID: w.bob.ID})
	f.SetMember(guildHome, &discordgo.Member{User: w.alice})
	f.SetMember(guildHome, &discordgo.Member{User: w.bob})
	f.SetMember(guildOther, &discordgo.Member{User: w.bob})
	return w
}

// storeRules stores the home server's roles and channels, as the bot does from its events.
func storeRules(t testing.TB, s stores) {
	t.Helper()
	ctx := t.Context()
	if err := s.Channels.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: guildHome, OwnerID: "999",
		Roles: map[string]int64{guildHome: discordgo.PermissionViewChannel, roleMod: discordgo.PermissionViewChannel}}); err != nil {
		t.Fatal(err)
	}
	err := s.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{
		{GuildID: guildHome, ChannelID: chanGeneral, Overwrites: []memory.Overwrite{}},
		{GuildID: guildHome, ChannelID: chanMods, Overwrites: []memory.Overwrite{
			{ID: guildHome, Type: 0, Deny: discordgo.PermissionViewChannel},
			{ID: roleMod, Type: 0, Allow: discordgo.PermissionViewChannel}}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dashboard is one web server (a process) over a store, served over TLS so Secure cookies
// work as in a browser.
type dashboard struct {
	t      testing.TB
	w      *world
	s      stores
	srv    *httptest.Server
	server *web.Server
	log    *syncBuffer
}

// options change a dashboard's configuration.
type options func(*web.Config)

func newDashboard(t testing.TB, w *world, s stores, opts ...options) *dashboard {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	public := "https://" + srv.Listener.Addr().String()
	log := &syncBuffer{}
	cfg := web.Config{PublicURL: public, DiscordURL: w.fake.URL(), ClientID: clientID, ClientSecret: clientSecret,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, o := range opts {
		o(&cfg)
	}
	server, err := web.New(cfg, dashboardDeps(t, w, s))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = server.Handler()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	w.redirects = append(w.redirects, server.RedirectURI())
	w.fake.SetOAuthApp(clientID, clientSecret, w.redirects...)
	return &dashboard{t: t, w: w, s: s, srv: srv, server: server, log: log}
}

// dashboardDeps are the store's parts and, as in kioku run, the member lookup with the bot's
// token (a REST session against the fake Discord) and the stored rules' decision.
func dashboardDeps(t testing.TB, w *world, s stores) web.Deps {
	rest, err := bot.NewSession("fake-bot-token", w.fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	return web.Deps{Sessions: s.Sessions, Memories: s.Memories, Finder: s.Channels, Recall: s.Recall, Transfer: s.Transfer,
		ForgetMe: s.ForgetMe, Turns: s.Turns, Privacy: s.Settings, Overview: s.Overview,
		Review: s.Review, Graph: s.Graph, Doctor: s.Health, Jobs: s.Jobs, Repairs: s.Maintenance,
		Budget: chat.NewDailyBudget(testDailyLimit, s.Budgets, nil).UsedToday,
		Members: func(ctx context.Context, guildID, userID string) ([]string, bool, error) {
			return bot.LookupMember(ctx, rest, guildID, userID)
		},
		Access: func(ctx context.Context, guildID, userID string, roles []string) (web.GuildAccess, bool, error) {
			gs, err := s.Settings.GuildSettings(ctx, guildID)
			if err != nil {
				return web.GuildAccess{}, false, err
			}
			a, ok, err := bot.StoredMemberAccess(ctx, s.Channels, guildID, userID, roles, gs.EditorRoleID)
			return web.GuildAccess{Channels: a.Channels, Manager: a.Manager, Editor: a.Editor}, ok, err
		}}
}

// browser is one browser: a client with its own cookie jar that trusts the dashboard's
// certificate and follows redirects (to the fake Discord and back) unless told not to.
type browser struct {
	t      testing.TB
	d      *dashboard
	client *http.Client
	// headers are sent with every request (Accept-Language, Sec-Fetch-Site).
	headers http.Header
}

func (d *dashboard) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		d.t.Fatal(err)
	}
	c := *d.srv.Client()
	c.Jar = jar
	return &browser{t: d.t, d: d, client: &c, headers: http.Header{}}
}

// on returns a browser with b's cookies that talks to dashboard d (another process).
func (b *browser) on(d *dashboard) *browser {
	c := *d.srv.Client()
	c.Jar = b.client.Jar
	return &browser{t: b.t, d: d, client: &c, headers: b.headers}
}

// response is what a request got back.
type response struct {
	*http.Response
	body string
}

func (b *browser) do(req *http.Request, follow bool) response {
	b.t.Helper()
	for k, v := range b.headers {
		req.Header[k] = v
	}
	c := *b.client
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{resp, string(raw)}
}

// get fetches path of the dashboard (or an absolute URL), following redirects.
func (b *browser) get(path string) response {
	b.t.Helper()
	return b.do(b.request("GET", path, nil), true)
}

// getNoFollow fetches without following a redirect.
func (b *browser) getNoFollow(path string) response {
	b.t.Helper()
	return b.do(b.request("GET", path, nil), false)
}

// post posts form to path without following the redirect that answers a change.
func (b *browser) post(path string, form url.Values) response {
	b.t.Helper()
	req := b.request("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req, false)
}

func (b *browser) request(method, path string, body io.Reader) *http.Request {
	b.t.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = b.d.srv.URL + path
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	return req
}

// signIn signs the browser in as u and returns the "My memory" page it lands on.
func (b *browser) signIn(u *discordgo.User) response {
	b.t.Helper()
	b.d.w.fake.AuthorizeAs(u)
	resp := b.get("/login")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/me" {
		b.t.Fatalf("sign-in as %s ended at %s with %d:\n%s\n%s", u.Username, resp.Request.URL, resp.StatusCode, resp.body, b.d.log)
	}
	return resp
}

// cookie returns the value of the browser's cookie name for the dashboard ("" if none).
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.d.srv.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// csrf returns the CSRF token a page's forms carry.
func csrfOf(t testing.TB, page string) string {
	t.Helper()
	const mark = `name="csrf" value="`
	i := strings.Index(page, mark)
	if i < 0 {
		t.Fatalf("the page has no CSRF field:\n%s", page)
	}
	rest := page[i+len(mark):]
	return rest[:strings.IndexByte(rest, '"')]
}

// remember saves a personal memory of user, learned in channel of guild ("" for a DM).
func remember(t testing.TB, s stores, user, guild, channel, content string) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopePersonal, UserID: user, GuildID: guild,
		Content: content, Provenance: memory.Provenance{AuthorID: user, ChannelID: channel}}, memory.UserActor(user))
	if err != nil || !res.Created {
		t.Fatalf("remember %q: %+v %v", content, res, err)
	}
	return res.Memory
}

// fixedClock is a clock for rate limits that moves only when told.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// advance moves the clock on by d.
func (c *fixedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a log destination tests read while servers write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
