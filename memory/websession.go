package memory

import "time"

// The web dashboard's sign-in with Discord and the sessions it makes. The store keeps both
// (so any process on the database serves any browser), and never the secrets themselves:
// a session is found by a hash of the token its cookie carries, a sign-in under way by a
// hash of its OAuth state and of the nonce its browser's cookie carries.

// WebSession is one browser signed in to the web dashboard as one member.
type WebSession struct {
	// TokenHash is the hex SHA-256 of the session cookie's token.
	TokenHash string
	// UserID is the member, as Discord identified them at sign-in.
	UserID string
	// GuildIDs are the servers Discord listed for the member at sign-in (the guilds scope):
	// the only servers whose memories the dashboard may show them; a server they leave
	// afterwards shows nothing once they sign in again.
	GuildIDs []string
	// CSRF is the per-session secret every form that changes something carries back.
	CSRF string
	// CreatedAt is when the member signed in, LastSeenAt when the session last served a
	// request (updated at most once a minute), ExpiresAt when it stops working.
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	// Memberships are the member's standing in each server of GuildIDs kioku is in, read
	// with the bot's token (the OAuth2 scopes give no roles), and CheckedAt when they were
	// last read. A server missing here, or not a Member, shows the session nothing.
	Memberships []WebMembership
	CheckedAt   time.Time
}

// WebMembership is a member's standing in one server, as Discord's member lookup (with the
// bot's token) last answered it for a web session.
type WebMembership struct {
	GuildID string `json:"guild_id"`
	// Name is the server's name as Discord listed it at sign-in, for the pages' headings.
	Name string `json:"name,omitempty"`
	// Member is set when Discord confirmed the membership; Roles are then the member's
	// roles. Unset means not a member, or that the lookup failed: no access either way.
	Member bool     `json:"member"`
	Roles  []string `json:"roles,omitempty"`
}

// Membership returns the session's standing in guildID, when it is a confirmed member.
func (ws WebSession) Membership(guildID string) (WebMembership, bool) {
	for _, m := range ws.Memberships {
		if m.GuildID == guildID && m.Member {
			return m, true
		}
	}
	return WebMembership{}, false
}

// WebLogin is a sign-in under way: the browser went to Discord and has not come back yet.
// It is taken once, by the browser that started it, before it expires.
type WebLogin struct {
	// StateHash is the hex SHA-256 of the OAuth state sent to Discord.
	StateHash string
	// BrowserHash is the hex SHA-256 of the nonce in the starting browser's cookie, which
	// binds the sign-in to that browser.
	BrowserHash string
	// Verifier is the PKCE code verifier the token exchange proves the sign-in with.
	Verifier string
	// ExpiresAt is when the sign-in can no longer complete.
	ExpiresAt time.Time
}
