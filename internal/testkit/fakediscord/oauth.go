package fakediscord

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// OAuth2 as Discord serves it for "Sign in with Discord", strict where a sign-in's safety
// depends on it: the authorization code grant with PKCE (S256 only), an exact redirect URI,
// single-use codes, and a token exchange that proves the verifier and the client secret.
// The browser's side of Discord (its own sign-in and the consent screen) is the member a test
// chose with AuthorizeAs: the authorize page grants at once for them.

// oauthState is what the fake keeps of OAuth2; guarded by Fake.mu.
type oauthState struct {
	clientID, secret string
	redirects        []string
	// signedIn is who the browser is signed in to Discord as; nil: nobody.
	signedIn *discordgo.User
	codes    map[string]*oauthGrant
	tokens   map[string]*oauthGrant
	// exchanged counts the codes exchanged for a token.
	exchanged int
}

// oauthGrant is what one code (and then its access token) stands for.
type oauthGrant struct {
	user      discordgo.User
	scopes    []string
	redirect  string
	challenge string
}

// SetOAuthApp registers the application's OAuth2 client: its id, its secret and the
// redirect URIs the authorize page accepts (exact matches, as Discord requires).
func (f *Fake) SetOAuthApp(clientID, clientSecret string, redirectURIs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oauth.clientID, f.oauth.secret, f.oauth.redirects = clientID, clientSecret, slices.Clone(redirectURIs)
}

// AuthorizeAs makes u the member the browser is signed in to Discord as: the authorize page
// grants each valid request for them at once, as after they pressed Authorize. nil signs the
// browser out, and the page then refuses.
func (f *Fake) AuthorizeAs(u *discordgo.User) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oauth.signedIn = nil
	if u != nil {
		f.oauth.signedIn = cloneJSON(u)
	}
}

// OAuthExchanges returns how many codes were exchanged for a token.
func (f *Fake) OAuthExchanges() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.oauth.exchanged
}

// AuthorizeURL returns the authorize page's URL on the fake, as Discord's is
// https://discord.com/oauth2/authorize.
func (f *Fake) AuthorizeURL() string { return f.srv.URL + "/oauth2/authorize" }

func (f *Fake) oauthRoutes() {
	f.mux.HandleFunc("GET /oauth2/authorize", f.authorize)
	f.route("POST", "/oauth2/token", f.exchangeToken)
	f.route("GET", "/users/@me/guilds", f.currentUserGuilds)
}

// authorize answers the authorize page: a request it cannot trust to send back (unknown
// client, unregistered redirect URI) gets an error page, one it can gets the error or a
// fresh code back at its redirect URI with its state.
func (f *Fake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	o := &f.oauth
	redirect := q.Get("redirect_uri")
	if o.clientID == "" || q.Get("client_id") != o.clientID || !slices.Contains(o.redirects, redirect) {
		http.Error(w, "Invalid OAuth2 redirect_uri or client_id", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		if st := q.Get("state"); st != "" {
			params.Set("state", st)
		}
		http.Redirect(w, r, redirect+"?"+params.Encode(), http.StatusFound)
	}
	scopes := strings.Fields(q.Get("scope"))
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}})
	case !slices.Contains(scopes, "identify"):
		back(url.Values{"error": {"invalid_scope"}})
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
	case o.signedIn == nil:
		back(url.Values{"error": {"access_denied"}})
	default:
		code := randomHex()
		if o.codes == nil {
			o.codes, o.tokens = map[string]*oauthGrant{}, map[string]*oauthGrant{}
		}
		o.codes[code] = &oauthGrant{user: *o.signedIn, scopes: scopes, redirect: redirect, challenge: q.Get("code_challenge")}
		back(url.Values{"code": {code}})
	}
}

// exchangeToken is POST /oauth2/token, grant type authorization_code: the client proves
// itself (HTTP Basic or form fields), the code is one this client got for this redirect URI
// and not used yet, and the verifier hashes to its challenge. A refused exchange leaves the
// code as it was.
func (f *Fake) exchangeToken(w http.ResponseWriter, r *http.Request, ex *exchange) {
	form := ex.req.Form
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = form["client_id"], form["client_secret"]
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := &f.oauth
	if o.clientID == "" || id != o.clientID || subtle.ConstantTimeCompare([]byte(secret), []byte(o.secret)) != 1 {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	if form["grant_type"] != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	g, ok := o.codes[form["code"]]
	switch {
	case !ok:
		oauthError(w, http.StatusBadRequest, "invalid_grant", `Invalid "code" in request.`)
		return
	case form["redirect_uri"] != g.redirect:
		oauthError(w, http.StatusBadRequest, "invalid_grant", `Invalid "redirect_uri" in request.`)
		return
	case !verifierMatches(form["code_verifier"], g.challenge):
		oauthError(w, http.StatusBadRequest, "invalid_grant", `Invalid "code_verifier"`)
		return
	}
	delete(o.codes, form["code"])
	token := randomHex()
	o.tokens[token] = g
	o.exchanged++
	writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 604800,
		"refresh_token": randomHex(), "scope": strings.Join(g.scopes, " ")})
}

// verifierMatches reports whether a PKCE verifier (43 to 128 characters, RFC 7636) hashes
// to challenge by S256.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// bearerGrant returns the grant of the request's bearer token; ok is false for a request
// without one. A token the fake never issued answers 401 and returns nil.
func (f *Fake) bearerGrant(w http.ResponseWriter, r *http.Request) (g *oauthGrant, ok bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return nil, false
	}
	f.mu.Lock()
	g = f.oauth.tokens[token]
	f.mu.Unlock()
	if g == nil {
		writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
	}
	return g, true
}

// currentUserGuilds is GET /users/@me/guilds for a bearer token with the guilds scope: the
// guilds the member is a member of (SetMember), as partial guilds.
func (f *Fake) currentUserGuilds(w http.ResponseWriter, r *http.Request, _ *exchange) {
	g, ok := f.bearerGrant(w, r)
	if !ok {
		writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if g == nil {
		return
	}
	if !slices.Contains(g.scopes, "guilds") {
		writeError(w, http.StatusForbidden, codeMissingAccess, "Missing Access")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*discordgo.UserGuild{}
	for _, id := range f.guildOrder {
		if _, member := f.members[id][g.user.ID]; member {
			gd := f.guilds[id]
			out = append(out, &discordgo.UserGuild{ID: id, Name: gd.Name, Owner: gd.OwnerID == g.user.ID})
		}
	}
	writeJSON(w, out)
}

// oauthError answers with OAuth2's error shape.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]string{"error": code}
	if description != "" {
		body["error_description"] = description
	}
	writeJSON(w, body)
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
