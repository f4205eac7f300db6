package web

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Who may see and change what on the dashboard: the same rules as in Discord, computed by the
// same code. Discord's OAuth2 scopes say who the member is and which servers they are in, not
// their roles, so the roles are read with the bot's token (MemberLookup) at sign-in and again
// once they are older than Config.MembershipMaxAge; the stored channel rules then decide
// (AccessFunc). A lookup that fails, a member Discord no longer lists and a server whose rules
// kioku never stored all mean no access there.

// DefaultMembershipMaxAge is how old a session's roles may get before they are read again:
// the bound the bot keeps members' roles for in DMs and ephemeral answers.
const DefaultMembershipMaxAge = 10 * time.Minute

// MemberLookup reads a member's roles in a guild with the bot's token. member is false when
// Discord says they are not in it; err is any other failure (unknown: no access).
type MemberLookup func(ctx context.Context, guildID, userID string) (roles []string, member bool, err error)

// GuildAccess is what a member may do in a guild.
type GuildAccess struct {
	// Channels are the guild's channels the member can view: the memories learned there are
	// the server memories they may see.
	Channels map[string]bool
	// Manager may see the guild's health and act on it; Editor may change its server memory.
	Manager, Editor bool
}

// AccessFunc decides a member's access to a guild from its stored rules and their roles
// (bot.StoredMemberAccess with the guild's editor role). ok is false when kioku holds no
// rules for the guild: it is not there, and shows nothing of it.
type AccessFunc func(ctx context.Context, guildID, userID string, roles []string) (access GuildAccess, ok bool, err error)

// server is a guild the visit's member may see, with what they may do there.
type server struct {
	GuildID, Name string
	GuildAccess
}

// membership reads and keeps current the member's standing in their servers.
type membership struct {
	lookup MemberLookup
	access AccessFunc
	log    *slog.Logger
	maxAge time.Duration
	now    func() time.Time
}

// read asks, for each listed server kioku holds rules for, whether the member is in it and
// with which roles. A server kioku is not in is left out; a failed lookup is recorded as no
// membership (no access) until the next read.
func (ms *membership) read(ctx context.Context, userID string, listed []memory.WebMembership) []memory.WebMembership {
	out := make([]memory.WebMembership, 0, len(listed))
	for _, g := range listed {
		if _, known, err := ms.access(ctx, g.GuildID, userID, nil); err != nil || !known {
			if err != nil {
				ms.log.WarnContext(ctx, "couldn't read a server's stored rules for a web session", "guild_id", g.GuildID, "err", err)
			}
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, discordTimeout)
		roles, member, err := ms.lookup(lctx, g.GuildID, userID)
		cancel()
		if err != nil {
			ms.log.WarnContext(ctx, "couldn't read a member's roles for the web dashboard; their server memory stays hidden",
				"guild_id", g.GuildID, "user_id", userID, "err", err)
			member, roles = false, nil
		}
		out = append(out, memory.WebMembership{GuildID: g.GuildID, Name: g.Name, Member: member, Roles: roles})
	}
	return out
}

// stale reports whether the session's memberships must be read again before it is served.
func (ms *membership) stale(ws memory.WebSession) bool {
	return ws.CheckedAt.IsZero() || ms.now().Sub(ws.CheckedAt) >= ms.maxAge
}

// listed are the servers a session's sign-in listed, with the names it learned.
func listed(ws memory.WebSession) []memory.WebMembership {
	names := map[string]string{}
	for _, m := range ws.Memberships {
		names[m.GuildID] = m.Name
	}
	out := make([]memory.WebMembership, 0, len(ws.GuildIDs))
	for _, id := range ws.GuildIDs {
		out = append(out, memory.WebMembership{GuildID: id, Name: names[id]})
	}
	return out
}

// servers returns the servers the visit's member may see, read once per request.
func (v *visit) servers(r *http.Request) []server {
	if v.known != nil {
		return v.known
	}
	v.known = []server{}
	for _, m := range v.sess.Memberships {
		if !m.Member {
			continue
		}
		a, ok, err := v.rules.access(r.Context(), m.GuildID, v.sess.UserID, m.Roles)
		if err != nil {
			v.rules.log.WarnContext(r.Context(), "couldn't read a server's rules; its memories stay hidden", "guild_id", m.GuildID,
				"user_id", v.sess.UserID, "err", err)
			continue
		}
		if !ok {
			continue
		}
		name := m.Name
		if name == "" {
			name = m.GuildID
		}
		v.known = append(v.known, server{GuildID: m.GuildID, Name: name, GuildAccess: a})
	}
	return v.known
}

// server returns the visit's access to guildID, when the member may see it.
func (v *visit) server(r *http.Request, guildID string) (server, bool) {
	for _, s := range v.servers(r) {
		if s.GuildID == guildID {
			return s, true
		}
	}
	return server{}, false
}

// audience is every channel the member can view in the servers they may see: what a page
// only they read may show, like a DM's answer.
func (v *visit) audience(r *http.Request) *memory.Audience {
	if v.aud != nil {
		return v.aud
	}
	out := map[string]bool{}
	for _, s := range v.servers(r) {
		maps.Copy(out, s.Channels)
	}
	v.aud = &memory.Audience{Channels: out}
	return v.aud
}
