package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
)

// webSecret is the OAuth2 client secret of these tests: it must show up nowhere.
const webSecret = "oauth-secret-do-not-print-7c1e"

// webEnv is the environment of a bot with its web dashboard at public.
func webEnv(public string) map[string]string {
	return map[string]string{
		"KIOKU_WEB_ADDR": "127.0.0.1:0", "KIOKU_WEB_URL": public, "KIOKU_DISCORD_CLIENT_ID": fakediscord.DefaultApplicationID,
		"KIOKU_DISCORD_CLIENT_SECRET": webSecret, "KIOKU_WEB_TRUSTED_PROXIES": "127.0.0.1", "KIOKU_PIPELINE_MODE": "off",
	}
}

// TestWebConfig: with KIOKU_WEB_ADDR set, the public URL and the OAuth2 client are required,
// each with a message naming the setting and where to find it; no message carries the secret.
func TestWebConfig(t *testing.T) {
	base := webEnv("https://kioku.example.org")
	load := func(change map[string]string) (Config, error) {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range change {
			env[k] = v
		}
		return LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}
	cfg, err := load(map[string]string{"KIOKU_WEB_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8,::1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	if cfg.WebURL != "https://kioku.example.org" || cfg.DiscordClientSecret != webSecret || !slices.Equal(cfg.WebTrustedProxies, want) {
		t.Errorf("config: %q %v", cfg.WebURL, cfg.WebTrustedProxies)
	}
	if off, err := load(map[string]string{"KIOKU_WEB_ADDR": "", "KIOKU_WEB_URL": "", "KIOKU_DISCORD_CLIENT_SECRET": ""}); err != nil || off.WebAddr != "" {
		t.Errorf("the dashboard off: %+v %v", off.WebAddr, err)
	}
	for setting, change := range map[string]map[string]string{
		"KIOKU_WEB_URL":               {"KIOKU_WEB_URL": ""},
		"KIOKU_DISCORD_CLIENT_ID":     {"KIOKU_DISCORD_CLIENT_ID": ""},
		"KIOKU_DISCORD_CLIENT_SECRET": {"KIOKU_DISCORD_CLIENT_SECRET": ""},
		"KIOKU_WEB_ADDR":              {"KIOKU_WEB_ADDR": "127.0.0.1:9464", "KIOKU_HTTP_ADDR": "127.0.0.1:9464"},
		"KIOKU_WEB_TRUSTED_PROXIES":   {"KIOKU_WEB_TRUSTED_PROXIES": "the proxy"},
		"KIOKU_WEB_URL ":              {"KIOKU_WEB_URL": "https://kioku.example.org/dashboard"},
		"KIOKU_DISCORD_CLIENT_ID ":    {"KIOKU_DISCORD_CLIENT_ID": "my-app"},
	} {
		t.Run(strings.TrimSpace(setting), func(t *testing.T) {
			_, err := load(change)
			if err == nil || !strings.HasPrefix(err.Error(), "invalid "+strings.TrimSpace(setting)+":") {
				t.Fatalf("error %v, want one naming %s", err, setting)
			}
			if strings.Contains(err.Error(), webSecret) {
				t.Errorf("the error carries the client secret: %v", err)
			}
		})
	}
}

// TestRunServesWebDashboard: `kioku run` with KIOKU_WEB_ADDR serves the dashboard there,
// behind a TLS reverse proxy as the README sets it up: a member signs in through the fake
// Discord and sees their memory. The dashboard's listener serves no /metrics (they stay
// on KIOKU_HTTP_ADDR), and neither the log nor doctor shows the client secret.
func TestRunServesWebDashboard(t *testing.T) {
	var target atomic.Pointer[url.URL]
	proxy := httptest.NewUnstartedServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target.Load())
		pr.SetXForwarded()
		pr.Out.Host = pr.In.Host
	}})
	public := "https://" + proxy.Listener.Addr().String()
	alice := &discordgo.User{ID: "700000000000000001", Username: "alice"}
	h := startBotWith(t, webEnv(public), func(f *fakediscord.Fake) {
		f.SetOAuthApp(fakediscord.DefaultApplicationID, webSecret, public+"/auth/callback")
		f.SetMember(guildA, &discordgo.Member{User: alice})
		f.AuthorizeAs(alice)
	})
	target.Store(&url.URL{Scheme: "http", Host: h.webAddr})
	proxy.StartTLS()
	t.Cleanup(proxy.Close)

	store := openBackend(t, h.db)
	if _, err := store.Memories.Remember(context.Background(), memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID,
		Content: "Alice waters the office plants on Mondays"}, memory.UserActor(alice.ID)); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := *proxy.Client()
	browser.Jar = jar
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	resp, page := get(public + "/")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/me" || !strings.Contains(page, "Alice waters the office plants") {
		t.Fatalf("signing in through the proxy ended at %s with %d:\n%s\n%s", resp.Request.URL, resp.StatusCode, page, h.stderr)
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", resp.Header.Get("Content-Security-Policy"))
	}
	if resp, _ := get(public + "/metrics"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the dashboard: %d, want 404", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + h.httpAddr + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics on KIOKU_HTTP_ADDR: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if log := h.stderr.String(); !strings.Contains(log, "serving the web dashboard") || strings.Contains(log, webSecret) {
		t.Errorf("the log does not say the dashboard is served, or carries the client secret:\n%s", log)
	}

	env := webEnv(public)
	env["KIOKU_DB"] = filepath.Join(t.TempDir(), "none.db")
	_, out, errOut := runApp(t, env, "", "doctor", "--offline")
	if !strings.Contains(out, "register "+public+"/auth/callback") || strings.Contains(out+errOut, webSecret) {
		t.Errorf("doctor:\n%s%s", out, errOut)
	}
}
