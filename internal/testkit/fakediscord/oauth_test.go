package fakediscord_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

const (
	oauthClient   = "1200000000000000001"
	oauthSecret   = "fake-client-secret"
	oauthRedirect = "https://kioku.example/auth/callback"
	oauthVerifier = "verifier-verifier-verifier-verifier-verifier-0001"
)

func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// noRedirects is a client that stops at the first redirect, as a test of the authorize
// page needs to read where it sends the browser.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorize asks the fake's authorize page with params over the defaults and returns where
// it sent the browser back to (nil when it did not).
func authorize(t *testing.T, f *fakediscord.Fake, params url.Values) (*http.Response, url.Values) {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {oauthClient}, "redirect_uri": {oauthRedirect},
		"scope": {"identify guilds"}, "state": {"st"}, "code_challenge": {challengeOf(oauthVerifier)}, "code_challenge_method": {"S256"}}
	for k, v := range params {
		q[k] = v
	}
	resp, err := noRedirects.Get(f.AuthorizeURL() + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return resp, nil
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), oauthRedirect+"?") {
		t.Fatalf("authorize sent the browser to %q (%v)", resp.Header.Get("Location"), err)
	}
	return resp, loc.Query()
}

// exchange posts a token request with form and returns the status and decoded body.
func exchange(t *testing.T, f *fakediscord.Fake, form url.Values, secret string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.URL()+"api/v10/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(oauthClient, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// getAs fetches path of the API with a bearer token into v and returns the status.
func getAs(t *testing.T, f *fakediscord.Fake, token, path string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", f.URL()+"api/v10"+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		_ = json.NewDecoder(resp.Body).Decode(v)
	}
	return resp.StatusCode
}

// TestOAuthCodeGrantWithPKCE walks a sign-in through the fake's OAuth2: a code for the
// member signed in to Discord, exchanged once with the verifier and the client secret for a
// token that reads the member and their guilds. Each step that a sign-in's safety rests on
// refuses what it must.
func TestOAuthCodeGrantWithPKCE(t *testing.T) {
	f := fakediscord.New(t)
	f.SetOAuthApp(oauthClient, oauthSecret, oauthRedirect)
	alice := f.NewUser("alice")
	f.SetGuild(&discordgo.Guild{ID: "300000000000000001", Name: "Home", OwnerID: alice.ID})
	f.SetGuild(&discordgo.Guild{ID: "300000000000000002", Name: "Elsewhere"})
	f.SetMember("300000000000000001", &discordgo.Member{User: alice})

	t.Run("ErrNobodySignedIn", func(t *testing.T) {
		_, back := authorize(t, f, nil)
		if back.Get("error") != "access_denied" || back.Get("state") != "st" {
			t.Fatalf("sent back %v", back)
		}
	})
	f.AuthorizeAs(alice)
	for name, params := range map[string]url.Values{
		"ErrUnregisteredRedirect": {"redirect_uri": {"https://evil.example/cb"}},
		"ErrUnknownClient":        {"client_id": {"42"}},
	} {
		t.Run(name, func(t *testing.T) {
			if resp, back := authorize(t, f, params); resp.StatusCode != http.StatusBadRequest || back != nil {
				t.Fatalf("status %d, sent back %v", resp.StatusCode, back)
			}
		})
	}
	t.Run("ErrNoPKCE", func(t *testing.T) {
		_, back := authorize(t, f, url.Values{"code_challenge_method": {"plain"}})
		if back.Get("error") != "invalid_request" || back.Get("code") != "" {
			t.Fatalf("sent back %v", back)
		}
	})

	_, back := authorize(t, f, nil)
	code := back.Get("code")
	if code == "" || back.Get("state") != "st" {
		t.Fatalf("sent back %v", back)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {oauthRedirect}}
	for name, c := range map[string]struct {
		verifier, secret string
		status           int
	}{
		"ErrNoVerifier":    {"", oauthSecret, http.StatusBadRequest},
		"ErrWrongVerifier": {oauthVerifier + "x", oauthSecret, http.StatusBadRequest},
		"ErrWrongSecret":   {oauthVerifier, "guessed", http.StatusUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			f2 := url.Values{}
			for k, v := range form {
				f2[k] = v
			}
			if c.verifier != "" {
				f2.Set("code_verifier", c.verifier)
			}
			if status, body := exchange(t, f, f2, c.secret); status != c.status || body["access_token"] != nil {
				t.Fatalf("status %d, body %v", status, body)
			}
		})
	}
	form.Set("code_verifier", oauthVerifier)
	status, body := exchange(t, f, form, oauthSecret)
	token, _ := body["access_token"].(string)
	if status != http.StatusOK || token == "" || body["token_type"] != "Bearer" || f.OAuthExchanges() != 1 {
		t.Fatalf("exchange: %d %v", status, body)
	}
	t.Run("ErrCodeReused", func(t *testing.T) {
		if status, body := exchange(t, f, form, oauthSecret); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Fatalf("status %d, body %v", status, body)
		}
	})
	t.Run("TokenReadsTheMember", func(t *testing.T) {
		var me discordgo.User
		if st := getAs(t, f, token, "/users/@me", &me); st != http.StatusOK || me.ID != alice.ID {
			t.Fatalf("users/@me: %d %+v", st, me)
		}
		var guilds []discordgo.UserGuild
		if st := getAs(t, f, token, "/users/@me/guilds", &guilds); st != http.StatusOK || len(guilds) != 1 ||
			guilds[0].ID != "300000000000000001" || !guilds[0].Owner {
			t.Fatalf("users/@me/guilds: %d %+v", st, guilds)
		}
		if st := getAs(t, f, "never-issued", "/users/@me", nil); st != http.StatusUnauthorized {
			t.Fatalf("users/@me with an unknown token: %d", st)
		}
	})
	t.Run("ErrGuildsWithoutScope", func(t *testing.T) {
		_, back := authorize(t, f, url.Values{"scope": {"identify"}})
		f3 := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {oauthRedirect},
			"code_verifier": {oauthVerifier}}
		_, body := exchange(t, f, f3, oauthSecret)
		tok, _ := body["access_token"].(string)
		if st := getAs(t, f, tok, "/users/@me/guilds", nil); st != http.StatusForbidden {
			t.Fatalf("users/@me/guilds without the guilds scope: %d", st)
		}
	})
}
