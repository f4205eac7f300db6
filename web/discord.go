package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// oauthScopes are what the dashboard asks Discord for: who the member is (identify) and
// which servers they are in (guilds). Neither gives their roles.
const oauthScopes = "identify guilds"

// discordClient is the OAuth2 client side of a sign-in: the authorize URL a browser is sent
// to, the token exchange, and the two reads the token is used for. The access token lives
// for one sign-in only; it is never stored.
type discordClient struct {
	// base is Discord's base URL with a trailing slash (https://discord.com/).
	base         *url.URL
	http         *http.Client
	clientID     string
	clientSecret string
	redirectURI  string
}

func newDiscordClient(cfg Config) (discordClient, error) {
	raw := cfg.DiscordURL
	if raw == "" {
		raw = "https://discord.com/"
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return discordClient{}, fmt.Errorf("web: invalid Discord URL %q", raw)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	return discordClient{base: base, http: cfg.HTTPClient, clientID: cfg.ClientID, clientSecret: cfg.ClientSecret,
		redirectURI: cfg.PublicURL + "/auth/callback"}, nil
}

// authorizeURL is Discord's authorize page for a sign-in with state and the PKCE
// challenge of verifier.
func (d discordClient) authorizeURL(state, verifier string) string {
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {d.clientID},
		"redirect_uri":          {d.redirectURI},
		"scope":                 {oauthScopes},
		"state":                 {state},
		"code_challenge":        {pkceChallenge(verifier)},
		"code_challenge_method": {"S256"},
	}
	return d.base.ResolveReference(&url.URL{Path: "oauth2/authorize"}).String() + "?" + q.Encode()
}

// pkceChallenge is the S256 challenge of a PKCE verifier (RFC 7636).
func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// discordError is a refusal from Discord, described by its status and OAuth2 error code
// only: its body may echo what was sent.
type discordError struct {
	step   string
	status int
	code   string
}

func (e *discordError) Error() string {
	if e.code != "" {
		return fmt.Sprintf("discord refused the %s: %d %s", e.step, e.status, e.code)
	}
	return fmt.Sprintf("discord refused the %s: %d", e.step, e.status)
}

// exchange trades a code for an access token, proving the sign-in with its verifier and
// the application with its secret (HTTP Basic, so the secret is in no URL or log).
func (d discordClient) exchange(ctx context.Context, code, verifier string) (string, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {d.redirectURI},
		"code_verifier": {verifier}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.api("oauth2/token"), strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("couldn't build the token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(d.clientID), url.QueryEscape(d.clientSecret))
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if err := d.do(req, "token exchange", &tok); err != nil {
		return "", err
	}
	if tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "Bearer") {
		return "", &discordError{step: "token exchange", status: http.StatusOK, code: "no bearer token"}
	}
	return tok.AccessToken, nil
}

// discordUser is what the dashboard reads of /users/@me.
type discordUser struct {
	ID string `json:"id"`
}

// user reads who the token was issued to.
func (d discordClient) user(ctx context.Context, token string) (discordUser, error) {
	var u discordUser
	if err := d.get(ctx, token, "users/@me", "user lookup", &u); err != nil {
		return u, err
	}
	if u.ID == "" {
		return u, &discordError{step: "user lookup", status: http.StatusOK, code: "no user id"}
	}
	return u, nil
}

// maxGuildName bounds a server's name as the pages show it (Discord's own limit is 100).
const maxGuildName = 100

// guilds reads the servers the token's member is in: their ids and names.
func (d discordClient) guilds(ctx context.Context, token string) ([]memory.WebMembership, error) {
	var gs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := d.get(ctx, token, "users/@me/guilds", "server list", &gs); err != nil {
		return nil, err
	}
	out := make([]memory.WebMembership, 0, len(gs))
	for _, g := range gs {
		if g.ID != "" {
			name := []rune(g.Name)
			out = append(out, memory.WebMembership{GuildID: g.ID, Name: string(name[:min(len(name), maxGuildName)])})
		}
	}
	return out, nil
}

func (d discordClient) get(ctx context.Context, token, path, step string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.api(path), nil)
	if err != nil {
		return fmt.Errorf("couldn't build the %s: %w", step, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return d.do(req, step, v)
}

// api is the URL of an API path (version 10).
func (d discordClient) api(path string) string {
	return d.base.ResolveReference(&url.URL{Path: "api/v10/" + path}).String()
}

// maxDiscordBody bounds what is read of one answer.
const maxDiscordBody = 1 << 20

// do sends req and decodes a 200 answer into v; any other answer is a discordError.
func (d discordClient) do(req *http.Request, step string, v any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("couldn't reach discord for the %s: %w", step, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscordBody))
	if err != nil {
		return fmt.Errorf("couldn't read discord's answer to the %s: %w", step, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return &discordError{step: step, status: resp.StatusCode, code: e.Error}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("couldn't decode discord's answer to the %s: %w", step, err)
	}
	return nil
}
