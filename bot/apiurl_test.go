package bot_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/bot"
)

// seen is what a test server observed about one request.
type seen struct {
	method, requestURI, host, auth, body string
}

func recordingServer(t *testing.T) (*httptest.Server, <-chan seen) {
	t.Helper()
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Get("Authorization"), string(body)}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestNewHTTPClient(t *testing.T) {
	t.Run("RewritesDiscordToBaseURL", func(t *testing.T) {
		for _, tc := range []struct {
			name, suffix, wantPrefix string
		}{
			{"RootWithSlash", "/", ""},
			{"RootWithoutSlash", "", ""},
			{"PathPrefix", "/discord/", "/discord"},
			{"PathPrefixWithoutSlash", "/discord", "/discord"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv, got := recordingServer(t)
				client, err := bot.NewHTTPClient(srv.URL+tc.suffix, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				// An escaped emoji and "@me" must reach the server unchanged.
				const path = "/api/v9/channels/1/messages/2/reactions/%23%E2%83%A3/@me"
				req, err := http.NewRequest("PUT", "https://discord.com"+path+"?limit=5", strings.NewReader(`{"a":1}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bot test-token")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()

				s := <-got
				want := seen{
					method:     "PUT",
					requestURI: tc.wantPrefix + path + "?limit=5",
					host:       strings.TrimPrefix(srv.URL, "http://"),
					auth:       "Bot test-token",
					body:       `{"a":1}`,
				}
				if s != want {
					t.Errorf("server saw %+v, want %+v", s, want)
				}
				if req.URL.Host != "discord.com" {
					t.Errorf("caller's request was modified: %s", req.URL)
				}
			})
		}
	})

	t.Run("OtherHostsPassThrough", func(t *testing.T) {
		api, apiGot := recordingServer(t)
		cdn, cdnGot := recordingServer(t)
		client, err := bot.NewHTTPClient(api.URL, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Get(cdn.URL + "/attachments/1/2/export.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s := <-cdnGot; s.requestURI != "/attachments/1/2/export.json" {
			t.Errorf("CDN saw %q", s.requestURI)
		}
		select {
		case s := <-apiGot:
			t.Errorf("API server got a request meant for another host: %+v", s)
		default:
		}
	})

	t.Run("DefaultURLIsPlainClient", func(t *testing.T) {
		for _, u := range []string{"", "https://discord.com/", "https://discord.com", "https://DISCORD.com/"} {
			client, err := bot.NewHTTPClient(u, 7*time.Second)
			if err != nil {
				t.Fatalf("%q: %v", u, err)
			}
			if client.Transport != nil || client.Timeout != 7*time.Second {
				t.Errorf("%q: got transport %T timeout %v, want a plain client", u, client.Transport, client.Timeout)
			}
		}
	})

	t.Run("ErrInvalidURL", func(t *testing.T) {
		for _, u := range []string{
			"discord.com",
			"/api",
			"ftp://example.com/",
			"http://",
			"http://example.com/?x=1",
			"http://example.com/#frag",
			"http://user:pass@example.com/",
			"http://[::1",
		} {
			_, err := bot.NewHTTPClient(u, time.Second)
			if err == nil || !strings.Contains(err.Error(), "KIOKU_DISCORD_API_URL") {
				t.Errorf("%q: got error %v, want one naming KIOKU_DISCORD_API_URL", u, err)
			}
		}
	})
}

func TestNewSession(t *testing.T) {
	srv, _ := recordingServer(t)
	s, err := bot.NewSession("test-token", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if s.Token != "Bot test-token" || s.Identify.Token != "Bot test-token" {
		t.Errorf("token = %q / %q, want the Bot prefix", s.Token, s.Identify.Token)
	}
	if s.Identify.Intents != bot.GatewayIntents {
		t.Errorf("intents = %b, want %b", s.Identify.Intents, bot.GatewayIntents)
	}
	if s.Client == nil || s.Client.Transport == nil {
		t.Error("session does not use the rewriting client")
	}

	t.Run("ErrInvalidURL", func(t *testing.T) {
		if _, err := bot.NewSession("test-token", "not a url"); err == nil {
			t.Error("want an error")
		}
	})
}
