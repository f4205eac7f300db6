// Package web is kioku's web dashboard: server-rendered pages behind "Sign in with Discord",
// served by `kioku run` on KIOKU_WEB_ADDR. Pages are html/template with kioku's own embedded
// stylesheet; they work without JavaScript and carry none.
//
// A member signs in with Discord's OAuth2 (authorization code with state and PKCE, scopes
// identify and guilds); the session lives in the store (package ltm, Sessions), so any
// process on the database serves any browser, and its cookie carries a token whose hash is
// all the store keeps. Every change is a POST with the session's CSRF token, goes through
// the same audited, undoable writes as commands with the member as the actor, and every
// memory id a request names is looked up in the member's own scope and under their
// audience: a memory they may not see reads exactly as one that does not exist.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Defaults copied into a Config by New where it leaves a field zero.
const (
	// DefaultSessionTTL is how long a sign-in lasts: a week, then Discord is asked again.
	// It does not slide, so a stolen cookie stops working by then whatever its use.
	DefaultSessionTTL = 7 * 24 * time.Hour
	// DefaultLoginTTL is how long a browser may take at Discord's authorize page.
	DefaultLoginTTL = 10 * time.Minute
	// DefaultAddressPerMinute is how many requests one client address may make a minute,
	// in bursts of as many: more than a person clicks, few enough that guessing states or
	// ids gets nowhere.
	DefaultAddressPerMinute = 120
	// DefaultSessionPerMinute is how many requests one signed-in browser may make a minute.
	DefaultSessionPerMinute = 60
	// DefaultPageSize is how many memories a page lists.
	DefaultPageSize = 20
	// discordTimeout bounds each call to Discord during a sign-in.
	discordTimeout = 10 * time.Second
)

// Config is the dashboard's configuration (cmd/kioku reads it from KIOKU_WEB_*).
type Config struct {
	// PublicURL is where browsers reach the dashboard (KIOKU_WEB_URL), scheme and host
	// only; Discord sends them back to PublicURL + "/auth/callback".
	PublicURL string
	// DiscordURL is Discord's base URL (KIOKU_DISCORD_API_URL): the authorize page is
	// DiscordURL + "oauth2/authorize", the API is under DiscordURL + "api/v10/".
	DiscordURL string
	// ClientID and ClientSecret are the application's OAuth2 credentials. The secret is
	// sent only to Discord's token endpoint; it is never logged or shown.
	ClientID, ClientSecret string
	// TrustedProxies are the peers whose X-Forwarded-For names the client (a TLS reverse
	// proxy in front); from any other peer the header is ignored. Default none.
	TrustedProxies []netip.Prefix
	// SessionTTL, LoginTTL, AddressPerMinute, SessionPerMinute and PageSize default to
	// the constants above.
	SessionTTL, LoginTTL               time.Duration
	AddressPerMinute, SessionPerMinute int
	PageSize                           int
	// MembershipMaxAge is how old a session's roles may get before they are read again
	// (DefaultMembershipMaxAge).
	MembershipMaxAge time.Duration
	// HTTPClient calls Discord; default one with a 10 s timeout.
	HTTPClient *http.Client
	// Logger gets ids and outcomes, never content, tokens or secrets.
	Logger *slog.Logger
	// Now is the clock of the rate limits and of when a session's last visit is recorded
	// again; default time.Now.
	Now func() time.Time
}

// Sessions are the sign-ins under way and the signed-in browsers. *ltm.Sessions satisfies it.
type Sessions interface {
	StartLogin(ctx context.Context, l memory.WebLogin, ttl time.Duration) error
	TakeLogin(ctx context.Context, stateHash, browserHash string) (memory.WebLogin, error)
	Create(ctx context.Context, ws memory.WebSession, ttl time.Duration) (memory.WebSession, error)
	Lookup(ctx context.Context, tokenHash string) (memory.WebSession, error)
	Touch(ctx context.Context, tokenHash string) error
	Revoke(ctx context.Context, tokenHash string) error
	SetMemberships(ctx context.Context, tokenHash string, ms []memory.WebMembership) error
}

// Memories are the member's memories and the writes the dashboard makes to them.
// *ltm.Memories satisfies it.
type Memories interface {
	List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error)
	Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error)
	ForgetAt(ctx context.Context, owner memory.Owner, versions map[int64]int, actor memory.Actor, reason string) ([]*memory.Memory, error)
	UndoAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, version int, actor memory.Actor) (memory.Undone, error)
	ScopeHistory(ctx context.Context, owner memory.Owner, limit int) ([]memory.HistoryEvent, error)
	ModifyAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error)
	History(ctx context.Context, owner memory.Owner, id int64) ([]memory.HistoryEvent, error)
}

// Overview adds up what a server or a member holds. *ltm.Overview satisfies it.
type Overview interface {
	AboutMember(ctx context.Context, userID string, limit int) ([]*memory.Memory, int, error)
	Contributions(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.Contributions, error)
}

// Finder finds a memory of a scope whether or not it was forgotten, for the checks made
// before acting on an id. *ltm.Channels satisfies it.
type Finder interface {
	Lookup(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error)
}

// Searcher is recall, as /memory search uses it. *ltm.Recall satisfies it.
type Searcher interface {
	Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error)
}

// Exporter writes a scope's export document. *ltm.Transfer satisfies it.
type Exporter interface {
	ExportWithin(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.ExportFile, error)
}

// Reviewer is the review queue, as /memory review lists and settles it. *ltm.Review
// satisfies it.
type Reviewer interface {
	Queue(ctx context.Context, owner memory.Owner, aud *memory.Audience, limit, offset int) ([]memory.ReviewItem, int, error)
	Resolve(ctx context.Context, owner memory.Owner, ref string, choice memory.ReviewChoice, text string, actor memory.Actor, aud *memory.Audience) ([]*memory.Memory, error)
}

// GraphReader is the knowledge graph around one entity. *ltm.Graph satisfies it.
type GraphReader interface {
	Neighbourhood(ctx context.Context, owner memory.Owner, name string) (graph.Neighbourhood, error)
	MentionedWith(ctx context.Context, vis memory.Visible, entityID int64, aud *memory.Audience, limit int) ([]graph.CoMention, error)
}

// Doctor diagnoses the store and keeps the audit of its repairs. *ltm.Health satisfies it.
type Doctor interface {
	Diagnose(ctx context.Context) (maintenance.Diagnostics, error)
	RecordRepairs(ctx context.Context, repairs []maintenance.Repair) error
	RepairLog(ctx context.Context, since time.Time) ([]maintenance.Repair, error)
}

// JobBoard is the background jobs: one server's, requeued one by one, and the scheduled
// tasks' last runs. *ltm.Jobs satisfies it.
type JobBoard interface {
	FindJobs(ctx context.Context, f memory.JobFilter) ([]*memory.Job, error)
	Requeue(ctx context.Context, id int64) error
	TaskRuns(ctx context.Context) ([]memory.TaskRun, error)
}

// IndexRepairer mends the full-text search indexes (`kioku reindex`). *ltm.Maintenance
// satisfies it.
type IndexRepairer interface {
	RepairIndexes(ctx context.Context) (int, error)
}

// BudgetFunc reports the model calls a server used today and its daily limit (<= 0: none);
// (*chat.DailyBudget).UsedToday is one.
type BudgetFunc func(ctx context.Context, guildID string) (used, limit int, err error)

// Deps are the store's parts the dashboard uses.
type Deps struct {
	Sessions Sessions
	Memories Memories
	Finder   Finder
	Recall   Searcher
	Transfer Exporter
	// Members reads a member's roles with the bot's token; Access decides from the stored
	// rules what those roles may see and do (access.go).
	Members MemberLookup
	Access  AccessFunc
	// ForgetMe, Turns and Privacy serve "My memory"'s forget-me, transcript and edit
	// (me_deps.go).
	ForgetMe ForgetMe
	Turns    Turns
	Privacy  Privacy
	// Overview counts a server's memories by channel and author and finds those about a
	// member.
	Overview Overview
	// Review serves the review pages; Graph the graph page; Doctor, Jobs, Repairs and
	// Budget the health page. Each page is served only when its parts are given (otherwise
	// its URL reads as missing).
	Review  Reviewer
	Graph   GraphReader
	Doctor  Doctor
	Jobs    JobBoard
	Repairs IndexRepairer
	Budget  BudgetFunc
}

// Server serves the dashboard. Create it with New; it is safe for concurrent use.
type Server struct {
	cfg  Config
	view *views
	gate *gate
	auth *signIn
	me   *myMemory
	// review, graph and health are the server pages; nil when Deps lacks their parts.
	review *reviewPages
	graph  *graphPage
	health *healthPage
	srv    *serverMemory
}

// New returns a dashboard server for cfg over deps, or an error naming what is missing.
func New(cfg Config, deps Deps) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if deps.Sessions == nil || deps.Memories == nil || deps.Finder == nil || deps.Recall == nil || deps.Transfer == nil ||
		deps.Members == nil || deps.Access == nil || deps.ForgetMe == nil || deps.Turns == nil || deps.Privacy == nil ||
		deps.Overview == nil {
		return nil, errors.New("web: every dependency is required")
	}
	view, err := parseViews(cfg.Logger)
	if err != nil {
		return nil, err
	}
	dc, err := newDiscordClient(cfg)
	if err != nil {
		return nil, err
	}
	members := &membership{lookup: deps.Members, access: deps.Access, log: cfg.Logger, maxAge: cfg.MembershipMaxAge, now: cfg.Now}
	g := &gate{byAddress: newLimiter(cfg.AddressPerMinute, cfg.Now), bySession: newLimiter(cfg.SessionPerMinute, cfg.Now),
		proxies: cfg.TrustedProxies, view: view}
	s := &Server{
		cfg: cfg, view: view, gate: g,
		auth: &signIn{sessions: deps.Sessions, discord: dc, view: view, gate: g, log: cfg.Logger,
			loginTTL: cfg.LoginTTL, sessionTTL: cfg.SessionTTL, now: cfg.Now, members: members},
		me:  &myMemory{deps: deps, view: view, log: cfg.Logger, pageSize: cfg.PageSize, now: cfg.Now},
		srv: &serverMemory{deps: deps, view: view, log: cfg.Logger, pageSize: cfg.PageSize, now: cfg.Now},
	}
	s.review, s.graph, s.health = newReviewPages(deps, view, cfg), newGraphPage(deps, view, cfg), newHealthPage(deps, view, cfg)
	s.wireTabs()
	return s, nil
}

// fill checks c and sets the defaults of the fields it leaves zero.
func (c *Config) fill() error {
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return fmt.Errorf("web: the public URL must be an http(s) URL with a host and no path, got %q", c.PublicURL)
	}
	c.PublicURL = u.Scheme + "://" + u.Host
	if c.ClientID == "" || c.ClientSecret == "" {
		return errors.New("web: the OAuth2 client id and secret are required")
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.LoginTTL <= 0 {
		c.LoginTTL = DefaultLoginTTL
	}
	if c.AddressPerMinute <= 0 {
		c.AddressPerMinute = DefaultAddressPerMinute
	}
	if c.SessionPerMinute <= 0 {
		c.SessionPerMinute = DefaultSessionPerMinute
	}
	if c.MembershipMaxAge <= 0 {
		c.MembershipMaxAge = DefaultMembershipMaxAge
	}
	if c.PageSize <= 0 {
		c.PageSize = DefaultPageSize
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: discordTimeout}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// RedirectURI is where Discord sends a browser back after its authorize page: the address
// to register in the Discord application's OAuth2 settings.
func (s *Server) RedirectURI() string { return s.cfg.PublicURL + "/auth/callback" }

// Handler returns the dashboard's routes behind its headers, its rate limit per client
// address and the standard library's cross-origin protection. It serves no /metrics, no
// /healthz: those stay on the operator's listener.
func (s *Server) Handler() http.Handler {
	a, me, sm := s.auth, s.me, s.srv
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /login", a.login)
	mux.HandleFunc("GET /auth/callback", a.callback)
	mux.HandleFunc("GET /signed-out", a.signedOut)
	mux.HandleFunc("GET /static/style.css", serveStyle)
	mux.HandleFunc("GET /favicon.ico", noIcon)
	mux.Handle("POST /logout", a.signedIn(a.changes(a.logout)))
	mux.Handle("GET /me", a.signedIn(me.mePage))
	mux.Handle("GET /me/memories/{id}", a.signedIn(me.memoryPage))
	mux.Handle("GET /me/memories/{id}/edit", a.signedIn(me.editPage))
	mux.Handle("POST /me/memories/{id}/edit", a.signedIn(a.changes(me.editSubmit)))
	mux.Handle("GET /me/memories/{id}/history", a.signedIn(me.historyPage))
	mux.Handle("GET /me/forget-me", a.signedIn(me.forgetMePage))
	mux.Handle("POST /me/forget-me", a.signedIn(a.changes(me.forgetMe)))
	mux.HandleFunc("GET /forgotten", a.forgotten)
	mux.Handle("POST /me/forget", a.signedIn(a.changes(me.forget)))
	mux.Handle("POST /me/undo", a.signedIn(a.changes(me.undo)))
	mux.Handle("GET /me/export.json", a.signedIn(me.exportJSON))
	mux.Handle("GET /me/export.md", a.signedIn(me.exportMarkdown))
	mux.Handle("GET /servers", a.signedIn(sm.serversPage))
	mux.Handle("GET /servers/{guild}", a.signedIn(sm.serverPage))
	mux.Handle("GET /servers/{guild}/memories/{id}", a.signedIn(sm.memoryPage))
	mux.Handle("POST /servers/{guild}/bulk/preview", a.signedIn(a.changesWithin(maxBulkFormBytes, sm.bulkPreview)))
	mux.Handle("POST /servers/{guild}/bulk/apply", a.signedIn(a.changesWithin(maxBulkFormBytes, sm.bulkApply)))
	mux.Handle("POST /servers/{guild}/bulk/undo", a.signedIn(a.changesWithin(maxBulkFormBytes, sm.bulkUndo)))
	s.review.routes(mux, a)
	s.graph.routes(mux, a)
	s.health.routes(mux, a)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.view.notFound(w, r, nil) })
	cop := http.NewCrossOriginProtection()
	// Behind a proxy that does not pass the Host header on, the public origin still counts
	// as the dashboard's own.
	if err := cop.AddTrustedOrigin(s.cfg.PublicURL); err != nil {
		s.cfg.Logger.Warn("couldn't trust the dashboard's own origin", "err", err)
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.view.forbidden(w, r, nil) }))
	return secureHeaders(s.gate.limitAddress(cop.Handler(mux)))
}

// home sends a signed-in browser to its memory and any other to sign in.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.auth.session(r); ok {
		http.Redirect(w, r, "/me", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// contentSecurityPolicy allows the dashboard's own stylesheet and nothing else: no script
// at all (inline or not), no frames around it, forms posting only to itself.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// secureHeaders sets on every response the headers that keep pages inert elsewhere: the
// content security policy, no sniffing, no referrer (a callback URL carries a code), no
// framing, and no caching of pages that show someone's memories.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}
