package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// Roles, the Discord side of channel-aware memory (SPEC §2): the guild's roles, kept in
// the store so that every process decides as the one receiving the guild's events, and
// each member's roles, which decide what a DM or an ephemeral answer may use.

// memberRolesMaxAge bounds how old a member's role snapshot may be when a DM or an
// ephemeral answer relies on it. kioku runs without the Guild Members intent, so a demoted
// member's roles change nowhere it can see until they speak again; past this age they are
// fetched again (GET /guilds/{guild}/members/{user}), and the fetched roles serve as the
// cache for the next answers.
const memberRolesMaxAge = 10 * time.Minute

// memberRolesRetry is how long a failed fetch of a member's roles stands before the next
// answer asks again: meanwhile their roles count as unknown, so a storm of DMs during a
// Discord outage costs one request per guild and minute.
const memberRolesRetry = time.Minute

// memberStatus is what kioku knows of a user in a guild.
type memberStatus int

const (
	memberUnseen memberStatus = iota // roles unknown: only what every member can read
	memberSeen                       // roles known
	memberGone                       // not a member: nothing of the guild
)

// roleSnapshot is a member's roles as kioku last learned them, and when.
type roleSnapshot struct {
	roles  []string
	status memberStatus
	at     time.Time
}

// fresh reports whether the snapshot may still be relied on at now: a failed fetch only
// until its retry.
func (s roleSnapshot) fresh(now time.Time) bool {
	maxAge := memberRolesMaxAge
	if s.status == memberUnseen {
		maxAge = memberRolesRetry
	}
	return now.Sub(s.at) < maxAge
}

// noteRoles records a member's roles as a message, an interaction or a member event
// showed them at at.
func (w *channelWatch) noteRoles(guildID, userID string, roles []string, at time.Time) {
	if roles == nil {
		return
	}
	w.noteMember(guildID, userID, roleSnapshot{roles: append([]string(nil), roles...), status: memberSeen, at: at})
}

// noteMember records what kioku learned of a member at snap.at.
func (w *channelWatch) noteMember(guildID, userID string, snap roleSnapshot) {
	if guildID == "" || userID == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.roles) >= maxWatched {
		clear(w.roles)
	}
	w.roles[memberKey{guildID, userID}] = snap
}

// snapshotOf returns what kioku last learned of a member, if anything.
func (w *channelWatch) snapshotOf(guildID, userID string) (roleSnapshot, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.roles[memberKey{guildID, userID}]
	return s, ok
}

// memberRoles returns a member's roles for an answer only they read: the snapshot while it
// is fresh, else their roles fetched again. Only guilds where the member was seen (in a
// message, an interaction, or the state's member cache, whose age is unknown) are asked
// about; elsewhere their roles are unknown.
func (b channelVisibility) memberRoles(ctx context.Context, guildID, userID string) ([]string, memberStatus) {
	now := b.now()
	snap, ok := b.channels.snapshotOf(guildID, userID)
	switch {
	case ok && snap.fresh(now):
		return snap.roles, snap.status
	case !ok && !b.inStateMembers(guildID, userID):
		return nil, memberUnseen
	}
	return b.fetchMemberRoles(ctx, guildID, userID, now)
}

// inStateMembers reports whether the state's member cache holds the member.
func (b channelVisibility) inStateMembers(guildID, userID string) bool {
	if b.session.State == nil {
		return false
	}
	m, err := b.session.State.Member(guildID, userID)
	return err == nil && m != nil
}

// fetchMemberRoles asks Discord for a member's roles and records the answer: their roles,
// that they are no member (404: they left, or the guild is gone), or, when the fetch
// failed, that their roles are unknown until memberRolesRetry.
func (b channelVisibility) fetchMemberRoles(ctx context.Context, guildID, userID string, now time.Time) ([]string, memberStatus) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := b.session.GuildMember(guildID, userID, discordgo.WithContext(ctx))
	snap := roleSnapshot{status: memberSeen, at: now}
	switch {
	case err == nil && m != nil:
		snap.roles = append([]string{}, m.Roles...)
	case isNotFound(err):
		snap.status = memberGone
	default:
		b.log.Warn("couldn't fetch a member's roles; their answers use only channels every member can read",
			"guild_id", guildID, "user_id", userID, "err", err)
		snap.status = memberUnseen
	}
	b.channels.noteMember(guildID, userID, snap)
	return snap.roles, snap.status
}

// isNotFound reports whether Discord answered 404.
func isNotFound(err error) bool {
	var re *discordgo.RESTError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound
}

// applyStoredRoles gives rules the guild's stored roles and owner, for a guild the state
// does not hold (another process receives its events, an outage, the window after a
// restart). Without stored roles the rules stay without: they then decide nothing.
func (b channelVisibility) applyStoredRoles(ctx context.Context, rules *GuildRules) {
	stored, ok, err := b.store.Channels.GuildRoles(ctx, rules.GuildID)
	if err != nil {
		b.log.Warn("couldn't read stored roles; memories stay in their own channels", "guild_id", rules.GuildID, "err", err)
		return
	}
	if ok {
		rules.Roles, rules.OwnerID = stored.Roles, stored.OwnerID
	}
}

// stateRoles copies a guild's roles and owner out of the state; ok is false when the state
// does not hold them (a guild it does not know, or one unavailable).
func stateRoles(st *discordgo.State, guildID string) (memory.GuildRoles, bool) {
	if st == nil {
		return memory.GuildRoles{}, false
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return memory.GuildRoles{}, false
	}
	st.RLock()
	defer st.RUnlock()
	if g.Unavailable {
		return memory.GuildRoles{}, false
	}
	r := memory.GuildRoles{GuildID: guildID, OwnerID: g.OwnerID, Roles: make(map[string]int64, len(g.Roles))}
	for _, role := range g.Roles {
		if role != nil {
			r.Roles[role.ID] = role.Permissions
		}
	}
	if _, ok := r.Roles[guildID]; !ok {
		return memory.GuildRoles{}, false
	}
	return r, true
}

// storeRoles stores a guild's roles and owner as the state now holds them.
func (b channelEvents) storeRoles(guildID string) {
	b.storeChannels(func(ctx context.Context) error {
		r, ok := stateRoles(b.session.State, guildID)
		if !ok {
			return nil // nothing certain to store; what is stored stays
		}
		return b.store.Channels.SaveGuildRoles(ctx, r)
	}, "stored guild roles", "guild_id", guildID)
}

// onMemberUpdate refreshes a member's role snapshot. The event only arrives where the
// operator enabled the Guild Members intent; without it memberRolesMaxAge bounds the age.
func (b channelEvents) onMemberUpdate(_ *discordgo.Session, e *discordgo.GuildMemberUpdate) {
	if e != nil && e.Member != nil && e.User != nil {
		b.channels.noteRoles(e.GuildID, e.User.ID, nonNil(e.Roles), b.now())
	}
}

// onMemberRemove records that a user is no longer a member (Guild Members intent only).
func (b channelEvents) onMemberRemove(_ *discordgo.Session, e *discordgo.GuildMemberRemove) {
	if e != nil && e.Member != nil && e.User != nil {
		b.channels.noteMember(e.GuildID, e.User.ID, roleSnapshot{status: memberGone, at: b.now()})
	}
}

// nonNil is roles, or an empty list: a member without roles has roles known to be none.
func nonNil(roles []string) []string {
	if roles == nil {
		return []string{}
	}
	return roles
}

// LookupMember reads a member's roles in a guild through session's REST API (with the bot's
// token): member is false when Discord answers 404 (they are not in it, or the guild is
// gone); any other failure is an error, and their roles stay unknown.
func LookupMember(ctx context.Context, session *discordgo.Session, guildID, userID string) (roles []string, member bool, err error) {
	m, err := session.GuildMember(guildID, userID, discordgo.WithContext(ctx))
	switch {
	case isNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("couldn't read member %s of guild %s: %w", userID, guildID, err)
	case m == nil:
		return nil, false, fmt.Errorf("discord gave no member %s of guild %s", userID, guildID)
	}
	return append([]string{}, m.Roles...), true, nil
}
