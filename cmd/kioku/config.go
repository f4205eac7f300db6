package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Config is everything kioku reads from its environment. cmd/kioku is the only place that
// reads it; every package below gets plain values.
type Config struct {
	DiscordToken  string
	DiscordAPIURL string
	DB            string
	LLMBaseURL    string
	LLMAPIKey     string
	ChatModel     string
	PipelineModel string
	EmbedModel    string
	HTTPAddr      string

	// The web dashboard (README "Web dashboard"): served on WebAddr when it is set, at the
	// public address WebURL, signing members in with the Discord application's OAuth2 client
	// DiscordClientID and DiscordClientSecret. The secret is never logged, printed or put
	// in an error message. WebTrustedProxies are the peers whose X-Forwarded-For is believed.
	WebAddr             string
	WebURL              string
	DiscordClientID     string
	DiscordClientSecret string
	WebTrustedProxies   []netip.Prefix

	// PipelineMode is the operator's mode for the background pipeline (SPEC §4): full,
	// controlled, shadow, frozen or off. Each guild's /kioku config mode can only narrow it.
	PipelineMode memory.PipelineMode
	// PipelineCallsPerHour caps the pipeline's model calls per hour (the cost guard).
	PipelineCallsPerHour int
	// PipelineGuildShare is the part of that budget one server may use while others wait
	// (0 < share <= 1; 1 turns the rule off).
	PipelineGuildShare float64
	// PipelineMemberTriggers is how many high-signal turns per hour of one member start an
	// extraction at once.
	PipelineMemberTriggers int
	// GuildPurgeAfter is how long a server's data is kept after the bot was removed from it.
	GuildPurgeAfter time.Duration
	// ArchivePastAfter archives a memory this long after the day its words name has
	// passed; 0 never does.
	ArchivePastAfter time.Duration
	// BackupDir, when not empty, is where `kioku run` writes a daily backup; BackupKeep is
	// how many of them it keeps.
	BackupDir  string
	BackupKeep int
	// MaintenanceMode is what the maintenance task does with what it finds: execute
	// repairs, observe (record what it would do) or off.
	MaintenanceMode maintenance.Mode

	// Abuse limits (README "Limits", limits.go).
	GuildTurnsPerMinute int // per-server rate limit
	MaxConcurrentTurns  int // chat turns running at once
	TurnQueue           int // messages waiting for a turn; 0: none
	GuildDailyLLMCalls  int // model calls per server (or member's DMs) and UTC day; 0: unlimited
	EmbedCallsPerMinute int // embedding calls per server (or member's DMs) and minute; 0: unlimited
	MaxServerMemories   int // live memories per server
	MaxMemberMemories   int // live personal memories per member

	KeywordIndexMemories int // memories the in-memory keyword indexes hold together
	// VectorCacheMB bounds the in-process vector index (docs/operations.md); 0: no bound.
	VectorCacheMB int
	// MemoryLimitMB is the Go runtime's soft memory limit (memlimit.go): -1 derives it from
	// the index bounds, 0 sets none.
	MemoryLimitMB int

	// Sharding (README "Scaling out"): this process runs shard ShardID of ShardCount
	// (0 of 1 unless KIOKU_SHARD_ID and KIOKU_SHARD_COUNT are set), or with ShardsAuto
	// every shard the gateway recommends.
	ShardID, ShardCount int
	ShardsAuto          bool

	ContextWindow   int           // tokens the chat model accepts
	MaxOutputTokens int           // tokens reserved for the reply
	LLMTimeout      time.Duration // per model call
	TurnsPerMinute  int           // per-user rate limit
	LogLevel        string
	LogFormat       string // "text" or "json"
}

// setting describes one configuration variable: its name, default, documentation and how it
// is stored into Config. The table drives loading, validation and `kioku help config`.
type setting struct {
	name, def, doc string
	set            func(*Config, string) error
}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func positiveInt(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive whole number, got %q", v)
		}
		*dst(c) = n
		return nil
	}
}

func httpURL(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			*dst(c) = v
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an absolute http(s) URL, got %q", v)
		}
		*dst(c) = v
		return nil
	}
}

var settings = []setting{
	{"KIOKU_DISCORD_TOKEN", "", "Discord bot token (required by `kioku run`).", str(func(c *Config) *string { return &c.DiscordToken })},
	{"KIOKU_DISCORD_API_URL", "https://discord.com/", "Discord API base URL (for Discord-compatible servers and tests).", httpURL(func(c *Config) *string { return &c.DiscordAPIURL })},
	{"KIOKU_DB", "./kioku.db", "SQLite database file (a path, or sqlite:PATH), or a PostgreSQL database URL (postgres://USER:PASSWORD@HOST:5432/DB).", func(c *Config, v string) error {
		path, err := databaseLocation(v)
		if err != nil {
			return err
		}
		c.DB = path
		return nil
	}},
	{"KIOKU_LLM_BASE_URL", "https://api.openai.com/v1", "OpenAI-compatible API root (Ollama: http://localhost:11434/v1).", httpURL(func(c *Config) *string { return &c.LLMBaseURL })},
	{"KIOKU_LLM_API_KEY", "", "API key for the LLM endpoint (empty for local servers).", str(func(c *Config) *string { return &c.LLMAPIKey })},
	{"KIOKU_CHAT_MODEL", "gpt-4o-mini", "Model that answers chat turns.", str(func(c *Config) *string { return &c.ChatModel })},
	{"KIOKU_PIPELINE_MODEL", "", "Model for background extraction and decisions (empty = the chat model).", str(func(c *Config) *string { return &c.PipelineModel })},
	{"KIOKU_EMBED_MODEL", "", "Embedding model (empty = keyword-only recall).", str(func(c *Config) *string { return &c.EmbedModel })},
	{"KIOKU_HTTP_ADDR", "127.0.0.1:9464", "Address for /healthz, /readyz and /metrics (empty disables).", func(c *Config, v string) error {
		if v != "" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf("want host:port, got %q", v)
			}
		}
		c.HTTPAddr = v
		return nil
	}},
	{"KIOKU_WEB_ADDR", "", "Address for the web dashboard, to put behind a TLS reverse proxy (empty disables; README \"Web dashboard\").", func(c *Config, v string) error {
		if v != "" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf("want host:port, got %q", v)
			}
		}
		c.WebAddr = v
		return nil
	}},
	{"KIOKU_WEB_URL", "", "The web dashboard's public address, https://HOST (no path); Discord sends members back to it + /auth/callback.", func(c *Config, v string) error {
		if v == "" {
			c.WebURL = ""
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("want an absolute https URL with a host and no path, such as https://kioku.example.org, got %q", v)
		}
		c.WebURL = u.Scheme + "://" + u.Host
		return nil
	}},
	{"KIOKU_DISCORD_CLIENT_ID", "", "The Discord application's OAuth2 client id (Developer Portal → your application → OAuth2), for the web dashboard's sign-in; required with KIOKU_WEB_ADDR.", func(c *Config, v string) error {
		if v != "" && strings.Trim(v, "0123456789") != "" {
			return fmt.Errorf("want the application's numeric id, got %q", v)
		}
		c.DiscordClientID = v
		return nil
	}},
	{"KIOKU_DISCORD_CLIENT_SECRET", "", "The Discord application's OAuth2 client secret, for the web dashboard's sign-in; required with KIOKU_WEB_ADDR; never logged or shown.", func(c *Config, v string) error {
		c.DiscordClientSecret = v // never echoed: no error here may quote it
		return nil
	}},
	{"KIOKU_WEB_TRUSTED_PROXIES", "", "Addresses or CIDRs, comma-separated, of the reverse proxies whose X-Forwarded-For names the web dashboard's clients (empty: none; the connection's peer is the client).", func(c *Config, v string) error {
		proxies, err := parseProxies(v)
		if err != nil {
			return err
		}
		c.WebTrustedProxies = proxies
		return nil
	}},
	{"KIOKU_PIPELINE_MODE", "full", "Background memory pipeline for the whole bot: full, controlled, shadow, frozen or off (a server's /kioku config can only narrow it).", func(c *Config, v string) error {
		mode, err := memory.ParsePipelineMode(v)
		if err != nil {
			return fmt.Errorf("want full, controlled, shadow, frozen or off, got %q", strings.ToLower(v))
		}
		c.PipelineMode = mode
		return nil
	}},
	{"KIOKU_PIPELINE_BUDGET", strconv.Itoa(pipeline.DefaultCallsPerHour), "Most model calls per hour for the background pipeline; over it, jobs wait.", positiveInt(func(c *Config) *int { return &c.PipelineCallsPerHour })},
	{"KIOKU_PIPELINE_SERVER_SHARE", strconv.FormatFloat(pipeline.DefaultGuildShare, 'g', -1, 64), "Part of the pipeline budget one server (or one member's DMs) may use while others wait, above 0 and at most 1 (1: no limit).", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return fmt.Errorf("want a number above 0 and at most 1, got %q", v)
		}
		c.PipelineGuildShare = f
		return nil
	}},
	{"KIOKU_PIPELINE_MEMBER_TRIGGERS", strconv.Itoa(pipeline.DefaultHighSignalPerHour), "High-signal messages per member per hour that start a background extraction at once; later ones wait for the batch or idle trigger.", positiveInt(func(c *Config) *int { return &c.PipelineMemberTriggers })},
	{"KIOKU_GUILD_PURGE_AFTER", "30d", "How long a server's data is kept after the bot is removed from it (e.g. 30d, 72h); added back sooner, it is kept.", func(c *Config, v string) error {
		d, err := parseDays(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration like 30d or 72h, got %q", v)
		}
		c.GuildPurgeAfter = d
		return nil
	}},
	{"KIOKU_ARCHIVE_PAST_AFTER", "0", "Archive a plan, event or deadline this long after the day it names has passed (e.g. 90d); archived memories leave chat context and default search, are kept until forgotten and can be brought back (0 = never).", func(c *Config, v string) error {
		if v == "0" {
			c.ArchivePastAfter = 0
			return nil
		}
		d, err := parseDays(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want 0 or a positive duration like 90d or 720h, got %q", v)
		}
		c.ArchivePastAfter = d
		return nil
	}},
	{"KIOKU_BACKUP_DIR", "", "Directory for a daily backup of the database while `kioku run` runs, kioku-YYYYMMDDTHHMMSSZ.db (empty = off).", str(func(c *Config) *string { return &c.BackupDir })},
	{"KIOKU_BACKUP_KEEP", "3", "How many daily backups to keep; older ones in KIOKU_BACKUP_DIR are deleted.", positiveInt(func(c *Config) *int { return &c.BackupKeep })},
	{"KIOKU_MAINTENANCE_MODE", string(maintenance.ModeExecute), "Self-repair every 15 minutes: execute (repair within cooldowns and hourly budgets), observe (diagnose and record what it would repair, change nothing) or off.", func(c *Config, v string) error {
		mode, err := maintenance.ParseMode(v)
		if err != nil {
			return fmt.Errorf("want execute, observe or off, got %q", strings.ToLower(v))
		}
		c.MaintenanceMode = mode
		return nil
	}},
	{"KIOKU_CONTEXT_WINDOW", "16384", "Context window of the chat model, in tokens.", positiveInt(func(c *Config) *int { return &c.ContextWindow })},
	{"KIOKU_MAX_OUTPUT_TOKENS", "1024", "Tokens reserved for each reply.", positiveInt(func(c *Config) *int { return &c.MaxOutputTokens })},
	{"KIOKU_LLM_TIMEOUT", "60s", "Timeout of one model call.", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a duration like 30s, got %q", v)
		}
		c.LLMTimeout = d
		return nil
	}},
	{"KIOKU_TURNS_PER_MINUTE", "10", "Chat turns each user may start per minute.", positiveInt(func(c *Config) *int { return &c.TurnsPerMinute })},
	{"KIOKU_GUILD_TURNS_PER_MINUTE", "60", "Chat turns each server may start per minute, all its members together.", positiveInt(func(c *Config) *int { return &c.GuildTurnsPerMinute })},
	{"KIOKU_MAX_CONCURRENT_TURNS", "16", "Chat turns that run at once; further messages wait in the turn queue.", positiveInt(func(c *Config) *int { return &c.MaxConcurrentTurns })},
	{"KIOKU_TURN_QUEUE", "64", "Messages that may wait for a turn; when it is full the bot answers that it is busy (0: no waiting).", nonNegativeInt(func(c *Config) *int { return &c.TurnQueue })},
	{"KIOKU_GUILD_DAILY_LLM_CALLS", "2000", "Model calls per UTC day for each server (and each member's DMs), chat and background pipeline together; 0 = unlimited.", nonNegativeInt(func(c *Config) *int { return &c.GuildDailyLLMCalls })},
	{"KIOKU_EMBED_CALLS_PER_MINUTE", "60", "Embedding calls per minute for each server (and each member's DMs): searches, chat recall, new memories and the embedding tracker; past it searches answer from keywords (0 = unlimited).", nonNegativeInt(func(c *Config) *int { return &c.EmbedCallsPerMinute })},
	{"KIOKU_MAX_MEMORIES_PER_SERVER", "200000", "Live memories one server may hold; a save past it is refused until some are forgotten.", positiveInt(func(c *Config) *int { return &c.MaxServerMemories })},
	{"KIOKU_KEYWORD_INDEX_MEMORIES", strconv.Itoa(ltm.DefaultKeywordIndexMax), "Memories the in-memory keyword indexes hold together (about 105 bytes for a 15-word message in a large server, 345 in a server of 1,000 memories); past it the least recently searched servers and members are dropped and rebuilt on their next search.", positiveInt(func(c *Config) *int { return &c.KeywordIndexMemories })},
	{"KIOKU_VECTOR_CACHE_MB", strconv.Itoa(ltm.DefaultVectorCacheBytes >> 20), "Memory for the in-process vector index, in MB; past it the servers recalled least recently leave it and are loaded again on their next recall (0 = no bound).", nonNegativeInt(func(c *Config) *int { return &c.VectorCacheMB })},
	{"KIOKU_MEMORY_LIMIT_MB", "auto", "Soft limit on the process's Go memory, in MB, so the garbage collector keeps the heap near what the indexes hold instead of letting it double; auto derives it from KIOKU_VECTOR_CACHE_MB and KIOKU_KEYWORD_INDEX_MEMORIES (none when the vector cache is unbounded), 0 = no limit; GOMEMLIMIT, when set, wins.", func(c *Config, v string) error {
		if v == "auto" {
			c.MemoryLimitMB = -1
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want auto or a whole number of MB, got %q", v)
		}
		c.MemoryLimitMB = n
		return nil
	}},
	{"KIOKU_MAX_MEMORIES_PER_MEMBER", "5000", "Live personal memories one member may hold; a save past it is refused until some are forgotten.", positiveInt(func(c *Config) *int { return &c.MaxMemberMemories })},
	{"KIOKU_SHARD_ID", "", "This process's shard, 0 to KIOKU_SHARD_COUNT-1 (set both or neither; README \"Scaling out\").", func(c *Config, v string) error {
		c.ShardID = -1 // unset
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number, 0 or more, got %q", v)
		}
		c.ShardID = n
		return nil
	}},
	{"KIOKU_SHARD_COUNT", "", "How many shards all processes run together (set with KIOKU_SHARD_ID).", func(c *Config, v string) error {
		if v == "" {
			return nil // unset
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive whole number, got %q", v)
		}
		c.ShardCount = n
		return nil
	}},
	{"KIOKU_SHARDS", "", "auto: this one process runs every shard Discord recommends (empty: KIOKU_SHARD_ID/KIOKU_SHARD_COUNT, or one shard).", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "":
		case "auto":
			c.ShardsAuto = true
		default:
			return fmt.Errorf("want auto or nothing, got %q", v)
		}
		return nil
	}},
	{"KIOKU_LOG_LEVEL", "info", "debug, info, warn or error.", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "debug", "info", "warn", "error":
			c.LogLevel = strings.ToLower(v)
			return nil
		}
		return fmt.Errorf("want debug, info, warn or error, got %q", v)
	}},
	{"KIOKU_LOG_FORMAT", "text", "text or json.", func(c *Config, v string) error {
		if v != "text" && v != "json" {
			return fmt.Errorf("want text or json, got %q", v)
		}
		c.LogFormat = v
		return nil
	}},
}

// parseDays parses a duration in whole days ("30d") or in Go's notation ("72h", "90m").
func parseDays(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100*365 {
			return 0, fmt.Errorf("invalid number of days %q", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}

// LoadConfig builds a Config from defaults, then the optional config file named by
// KIOKU_CONFIG (KEY=VALUE lines), then the environment, which wins. The first bad value
// fails with one line naming the setting.
func LoadConfig(lookupEnv func(string) (string, bool)) (Config, error) {
	values := make(map[string]string, len(settings))
	for _, s := range settings {
		values[s.name] = s.def
	}
	if path, _ := lookupEnv("KIOKU_CONFIG"); path != "" {
		fileValues, err := readConfigFile(path)
		if err != nil {
			return Config{}, err
		}
		for k, v := range fileValues {
			values[k] = v
		}
	}
	for _, s := range settings {
		// A variable that is set wins even when empty, so an operator can clear a default
		// (KIOKU_EMBED_MODEL= keeps keyword-only recall; KIOKU_HTTP_ADDR= disables the endpoint).
		if v, ok := lookupEnv(s.name); ok {
			values[s.name] = v
		}
	}
	var c Config
	for _, s := range settings {
		if err := s.set(&c, strings.TrimSpace(values[s.name])); err != nil {
			return Config{}, fmt.Errorf("invalid %s: %v", s.name, err)
		}
	}
	if c.MaxOutputTokens >= c.ContextWindow {
		return Config{}, fmt.Errorf("invalid KIOKU_MAX_OUTPUT_TOKENS: %d leaves no room in KIOKU_CONTEXT_WINDOW %d", c.MaxOutputTokens, c.ContextWindow)
	}
	if err := c.checkShards(); err != nil {
		return Config{}, err
	}
	if err := c.checkWeb(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// checkWeb checks the web dashboard's settings together: with KIOKU_WEB_ADDR set, the
// public URL and the OAuth2 credentials are required. The application's id is not known
// without asking Discord (the bot token names the bot user, which older applications do
// not share their id with), so it is asked for rather than guessed. No message names the
// secret's value.
func (c *Config) checkWeb() error {
	if c.WebAddr == "" {
		return nil
	}
	switch {
	case c.WebURL == "":
		return errors.New("invalid KIOKU_WEB_URL: required with KIOKU_WEB_ADDR: the dashboard's public https address, such as https://kioku.example.org (Discord sends members back to it + /auth/callback)")
	case c.DiscordClientID == "":
		return errors.New("invalid KIOKU_DISCORD_CLIENT_ID: required with KIOKU_WEB_ADDR: the application's id (Discord Developer Portal → your application → OAuth2 → Client ID)")
	case c.DiscordClientSecret == "":
		return errors.New("invalid KIOKU_DISCORD_CLIENT_SECRET: required with KIOKU_WEB_ADDR: the application's client secret (Discord Developer Portal → your application → OAuth2 → Reset Secret)")
	case c.WebAddr == c.HTTPAddr && !strings.HasSuffix(c.WebAddr, ":0"): // port 0: each gets a free port
		return fmt.Errorf("invalid KIOKU_WEB_ADDR: %s is KIOKU_HTTP_ADDR too; the dashboard and /metrics need addresses of their own", c.WebAddr)
	}
	return nil
}

// parseProxies reads KIOKU_WEB_TRUSTED_PROXIES: addresses and CIDRs separated by commas.
func parseProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("want addresses or CIDRs separated by commas, such as 127.0.0.1,10.0.0.0/8, got %q", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// checkShards checks the sharding settings together and fills in the single shard (0 of 1)
// when none is set. A process given half of a pair would connect as the wrong shard and
// miss or double-answer servers, so it fails at start instead.
func (c *Config) checkShards() error {
	idSet, countSet := c.ShardID >= 0, c.ShardCount > 0
	switch {
	case c.ShardsAuto && (idSet || countSet):
		return errors.New("invalid KIOKU_SHARDS: auto runs every shard in this process; unset KIOKU_SHARD_ID and KIOKU_SHARD_COUNT, or unset KIOKU_SHARDS")
	case idSet && !countSet:
		return errors.New("invalid KIOKU_SHARD_ID: set KIOKU_SHARD_COUNT too (both or neither)")
	case countSet && !idSet:
		return errors.New("invalid KIOKU_SHARD_COUNT: set KIOKU_SHARD_ID too (both or neither)")
	case idSet && c.ShardID >= c.ShardCount:
		return fmt.Errorf("invalid KIOKU_SHARD_ID: %d is not below KIOKU_SHARD_COUNT %d (shards are numbered from 0)", c.ShardID, c.ShardCount)
	case !idSet:
		c.ShardID, c.ShardCount = 0, 1
	}
	return nil
}

func readConfigFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("invalid KIOKU_CONFIG: %v", err)
	}
	defer f.Close()
	known := make(map[string]bool, len(settings))
	for _, s := range settings {
		known[s.name] = true
	}
	out := make(map[string]string)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !known[key] {
			return nil, fmt.Errorf("invalid KIOKU_CONFIG: %s line %d: want KIOKU_SETTING=value", path, n)
		}
		out[key] = strings.Trim(strings.TrimSpace(value), `"'`)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("invalid KIOKU_CONFIG: %v", err)
	}
	return out, nil
}

// databaseLocation reads KIOKU_DB: a SQLite file path, sqlite:PATH, or a PostgreSQL URL
// (postgres:// or postgresql://), which is checked here so a malformed one stops kioku with
// the setting's name rather than at the first connection.
func databaseLocation(v string) (string, error) {
	v = strings.TrimSpace(v)
	if isPostgresURL(v) {
		v = lowerScheme(v)
		if _, err := pgxpool.ParseConfig(v); err != nil {
			// The parser's message may quote the URL, password included: say what is wrong
			// without it.
			return "", fmt.Errorf("want a PostgreSQL URL such as postgres://USER:PASSWORD@HOST:5432/DB, got one that does not parse (%s)", redactURL(v))
		}
		return v, nil
	}
	v = strings.TrimPrefix(v, "sqlite:")
	if v == "" {
		return "", fmt.Errorf("want a file path")
	}
	return v, nil
}
