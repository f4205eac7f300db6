package bot

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// DefaultAPIURL is Discord's own API host. discordgo builds every REST URL
// from it, so it is also the host the rewriting transport looks for.
const DefaultAPIURL = "https://discord.com/"

// GatewayIntents is the gateway intent set kioku identifies with: guild and DM
// messages are what it answers, message content is needed to read them
// (privileged, must be enabled for the application), and guilds keeps
// discordgo's state cache of guilds and channels populated.
const GatewayIntents = discordgo.IntentsGuilds |
	discordgo.IntentsGuildMessages |
	discordgo.IntentsMessageContent |
	discordgo.IntentsDirectMessages

// discordHost is the host of every URL discordgo derives from its
// package-level Endpoint* variables.
const discordHost = "discord.com"

// NewHTTPClient returns the HTTP client a discordgo session should use to
// reach the Discord API at apiURL (the KIOKU_DISCORD_API_URL setting).
//
// discordgo builds REST URLs from package-level variables (EndpointAPI and
// friends) that other code, and tests running in parallel, would share if we
// reassigned them. Instead the endpoints keep pointing at
// https://discord.com/ and the returned client's transport redirects each
// request aimed at that host to apiURL: scheme, host and any path prefix are
// replaced, while the API path, query, method, headers and body are kept.
// Requests to other hosts (the CDN, attachment URLs) pass through untouched.
// The gateway needs no rewriting because discordgo asks REST for its URL, so
// a Discord-compatible server (or the test fake) hands out its own.
//
// For the default URL (or an empty one) a plain client is returned. A timeout
// of zero means no timeout, as for http.Client.
func NewHTTPClient(apiURL string, timeout time.Duration) (*http.Client, error) {
	base, err := parseAPIURL(apiURL)
	if err != nil {
		return nil, err
	}
	if base == nil {
		return &http.Client{Timeout: timeout}, nil
	}
	// A clone keeps DefaultTransport's proxy and timeout settings without
	// sharing its connection pool with unrelated clients.
	var next http.RoundTripper = http.DefaultTransport
	if t, ok := next.(*http.Transport); ok {
		next = t.Clone()
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: &rewritingTransport{base: base, next: next},
	}, nil
}

// NewSession returns a discordgo session for a bot token that talks to the
// API at apiURL (see NewHTTPClient) and identifies with GatewayIntents. It does not
// connect; call Open once handlers are added.
//
// The token is given without the "Bot " prefix, which is added here because
// Discord rejects bot tokens without it; a pasted prefix is tolerated.
func NewSession(token, apiURL string) (*discordgo.Session, error) {
	client, err := NewHTTPClient(apiURL, defaultRESTTimeout)
	if err != nil {
		return nil, err
	}
	session, err := discordgo.New("Bot " + strings.TrimPrefix(token, "Bot "))
	if err != nil {
		return nil, fmt.Errorf("couldn't create discord session: %w", err)
	}
	session.Client = client
	session.Identify.Intents = GatewayIntents
	return session, nil
}

// defaultRESTTimeout matches discordgo's own default client, so routing
// through a custom client does not change how long a stuck call may hang.
const defaultRESTTimeout = 20 * time.Second

// parseAPIURL validates apiURL and returns the base to rewrite to, or nil
// when requests can go to Discord unchanged.
func parseAPIURL(apiURL string) (*url.URL, error) {
	if apiURL == "" {
		return nil, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("invalid KIOKU_DISCORD_API_URL %q: %w", apiURL, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Opaque != "":
		return nil, fmt.Errorf("invalid KIOKU_DISCORD_API_URL %q: want an absolute http or https URL such as %s", apiURL, DefaultAPIURL)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("invalid KIOKU_DISCORD_API_URL %q: want a base URL without credentials, query or fragment", apiURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	if u.Scheme == "https" && strings.EqualFold(u.Host, discordHost) && u.Path == "/" {
		return nil, nil
	}
	return u, nil
}

// rewritingTransport sends requests for https://discord.com/ to base instead.
type rewritingTransport struct {
	base *url.URL
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper. The request is cloned because a
// RoundTripper must not modify the caller's request.
func (t *rewritingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isDiscordAPI(req.URL) {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	// Work on the escaped form so that IDs like "@me" and escaped emoji in
	// reaction routes reach the server byte for byte as discordgo wrote them.
	escaped := t.base.EscapedPath() + strings.TrimPrefix(req.URL.EscapedPath(), "/")
	path, err := url.PathUnescape(escaped)
	if err != nil {
		return nil, fmt.Errorf("couldn't rewrite discord API path %q: %w", req.URL.EscapedPath(), err)
	}
	out.URL.Scheme = t.base.Scheme
	out.URL.Host = t.base.Host
	out.URL.Path = path
	out.URL.RawPath = escaped
	// An empty Host makes net/http derive the Host header from the new URL
	// instead of sending "discord.com" to the other server.
	out.Host = ""
	return t.next.RoundTrip(out)
}

// isDiscordAPI reports whether u is aimed at discordgo's default API host.
func isDiscordAPI(u *url.URL) bool {
	if u.Scheme != "https" {
		return false
	}
	host := u.Host
	if h, port, ok := strings.Cut(host, ":"); ok {
		if port != "443" {
			return false
		}
		host = h
	}
	return strings.EqualFold(host, discordHost)
}

// InvitePermissions is the permission integer for the bot's invite link:
// View Channels, Send Messages, Send Messages in Threads, Read Message
// History (to see what a reply refers to), Attach Files (exports), Embed
// Links (memory lists) and Use Application Commands. Nothing more: kioku
// never moderates, so it asks for no management permission.
const InvitePermissions = discordgo.PermissionViewChannel |
	discordgo.PermissionSendMessages |
	discordgo.PermissionSendMessagesInThreads |
	discordgo.PermissionReadMessageHistory |
	discordgo.PermissionAttachFiles |
	discordgo.PermissionEmbedLinks |
	discordgo.PermissionUseApplicationCommands
