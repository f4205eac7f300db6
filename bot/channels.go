package bot

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// Channel-aware memory, the Discord side (SPEC §2): which channels' memories may reach a
// reply. A reply posted in a channel is read by everyone who can view that channel; a DM or
// an ephemeral answer by its one recipient. The rules come from discordgo's state (kept up
// to date by the Guilds intent: channels, threads and roles) plus the last stored copy of
// channels that are gone from it, so a deleted channel's memories keep their rule.

// maxWatched bounds the in-memory maps of member roles and private-thread posters. Past it
// they are dropped, which only narrows DM and ephemeral audiences until members speak again.
const maxWatched = 100_000

// channelWatch holds what the bot learned from events about who can read what, and the
// audiences computed from it.
type channelWatch struct {
	// writeMu orders the writes of stored channel visibility (see storeChannels).
	writeMu sync.Mutex

	mu sync.Mutex
	// roles are the last roles seen per guild member, and when (roles.go): messages and
	// interactions carry them, and a DM carries none.
	roles map[memberKey]roleSnapshot
	// posters are the members seen posting in each private thread: its members, as far as
	// kioku can know them without the member list.
	posters map[string]map[string]bool
	guilds  map[string]*guildAudiences
}

type memberKey struct{ guild, user string }

// guildAudiences caches one guild's rules and the audiences computed from them. fp is the
// fingerprint of the state they were built from: discordgo applies channel and role events
// to its state before any handler runs, so a changed fingerprint catches a change even
// when the turn runs before the event's own handler has dropped the cache.
type guildAudiences struct {
	fp      uint64
	rules   *GuildRules
	public  map[string]bool
	replies map[string]map[string]bool
}

func newChannelWatch() *channelWatch {
	return &channelWatch{roles: map[memberKey]roleSnapshot{}, posters: map[string]map[string]bool{},
		guilds: map[string]*guildAudiences{}}
}

// notePost records that a member posted in a private thread, which makes them one of its
// members.
func (w *channelWatch) notePost(threadID, userID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.posters) >= maxWatched {
		clear(w.posters)
	}
	if w.posters[threadID] == nil {
		w.posters[threadID] = map[string]bool{}
	}
	w.posters[threadID][userID] = true
}

// postedIn returns whether the user was seen posting in a thread.
func (w *channelWatch) postedIn(userID string) func(threadID string) bool {
	return func(threadID string) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.posters[threadID][userID]
	}
}

// invalidate drops a guild's cached audiences.
func (w *channelWatch) invalidate(guildID string) {
	w.mu.Lock()
	delete(w.guilds, guildID)
	w.mu.Unlock()
}

// observe records what a guild message says about its author: their roles, and their
// membership of a private thread.
func (b channelVisibility) observe(m *discordgo.Message) {
	if m.GuildID == "" || m.Author == nil {
		return
	}
	if m.Member != nil {
		b.channels.noteRoles(m.GuildID, m.Author.ID, m.Member.Roles, b.now())
	}
	if b.session.State == nil {
		return
	}
	if ch, err := b.session.State.Channel(m.ChannelID); err == nil && ch.Type == discordgo.ChannelTypeGuildPrivateThread {
		b.channels.notePost(m.ChannelID, m.Author.ID)
	}
}

// replyAudience is the audience of a reply posted in a guild channel: the channels of its
// guild whose viewers include everyone who can view it, and the channels of other guilds
// every member there can read (for personal memories of members who opted into
// cross-server use). In a DM it is the DM's one reader's (memberAudience). Without its
// guild's roles it is the channel alone, and says the rules are unknown.
func (b channelVisibility) replyAudience(ctx context.Context, guildID, channelID string) *memory.Audience {
	out := map[string]bool{channelID: true}
	unknown := false
	for _, gid := range b.stateGuilds(guildID) {
		ga := b.audiences(ctx, gid)
		if gid != guildID {
			maps.Copy(out, ga.public)
			continue
		}
		unknown = !ga.rules.RolesKnown()
		maps.Copy(out, b.channels.reply(ga, channelID))
	}
	return &memory.Audience{Channels: out, RulesUnknown: unknown}
}

// reply returns the cached audience of a reply in channel y of the guild.
func (w *channelWatch) reply(ga *guildAudiences, y string) map[string]bool {
	w.mu.Lock()
	got, ok := ga.replies[y]
	w.mu.Unlock()
	if ok {
		return got
	}
	got = ga.rules.ReplyAudience(y)
	w.mu.Lock()
	ga.replies[y] = got
	w.mu.Unlock()
	return got
}

// memberAudience is the audience of a reply only userID reads (a DM, an ephemeral answer):
// every channel they can view, in every guild whose roles are known, from their roles
// there (hereRoles in the guild the interaction came from; else the last seen, fetched
// again past memberRolesMaxAge; only channels every member can read where their roles are
// unknown; nothing of a guild they left). The channel they are asking in is theirs to read.
func (b channelVisibility) memberAudience(ctx context.Context, userID, hereGuild, hereChannel string, hereRoles []string) *memory.Audience {
	out := map[string]bool{}
	if hereGuild != "" && hereChannel != "" {
		out[hereChannel] = true
	}
	posted := b.channels.postedIn(userID)
	for _, gid := range b.stateGuilds(hereGuild) {
		ga := b.audiences(ctx, gid)
		if !ga.rules.RolesKnown() {
			continue // nothing is certain there, and nobody is asked about it
		}
		roles, status := hereRoles, memberSeen
		if hereRoles == nil || gid != hereGuild {
			roles, status = b.memberRoles(ctx, gid, userID)
		}
		switch status {
		case memberGone:
		case memberUnseen:
			maps.Copy(out, ga.public)
		default:
			maps.Copy(out, ga.rules.MemberAudience(userID, roles, true, posted))
		}
	}
	return &memory.Audience{Channels: out}
}

// stateGuilds returns the ids of the guilds in the state, and also always must (the guild
// a reply is in, even when the state does not know it).
func (b channelVisibility) stateGuilds(must string) []string {
	var out []string
	if must != "" {
		out = append(out, must)
	}
	st := b.session.State
	if st == nil {
		return out
	}
	st.RLock()
	defer st.RUnlock()
	for _, g := range st.Guilds {
		if g.ID != must {
			out = append(out, g.ID)
		}
	}
	return out
}

// audiences returns the guild's rules and audiences, rebuilding them when the state changed.
func (b channelVisibility) audiences(ctx context.Context, guildID string) *guildAudiences {
	rules, fp, inState := b.snapshot(guildID)
	w := b.channels
	w.mu.Lock()
	if ga, ok := w.guilds[guildID]; ok && inState && ga.fp == fp {
		w.mu.Unlock()
		return ga
	}
	w.mu.Unlock()

	if !inState {
		b.applyStoredRoles(ctx, rules)
	}
	// Channels gone from the state keep the rule they last had.
	stored, err := b.store.Channels.GuildChannels(ctx, guildID)
	if err != nil {
		// Without them those channels are unknown, and unknown channels' memories are
		// used nowhere else: the safe side.
		b.log.Warn("couldn't read stored channels; memories of deleted channels stay where they were learned",
			"guild_id", guildID, "err", err)
	}
	for _, c := range stored {
		if _, ok := rules.Channels[c.ChannelID]; ok {
			continue
		}
		rules.Channels[c.ChannelID] = ruleFromStored(c)
	}
	ga := &guildAudiences{fp: fp, rules: rules, public: rules.PublicChannels(), replies: map[string]map[string]bool{}}
	if inState {
		w.mu.Lock()
		if len(w.guilds) >= maxWatched {
			clear(w.guilds)
		}
		w.guilds[guildID] = ga
		w.mu.Unlock()
	}
	return ga
}

// snapshot copies a guild's roles, channels and threads out of the state, with a
// fingerprint of everything that decides who can view what. A guild the state does not hold
// with its roles (unknown, or unavailable) gives empty rules and inState false.
func (b channelVisibility) snapshot(guildID string) (*GuildRules, uint64, bool) {
	rules := &GuildRules{GuildID: guildID, Roles: map[string]int64{}, Channels: map[string]*ChannelRule{}}
	st := b.session.State
	if st == nil {
		return rules, 0, false
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return rules, 0, false
	}
	h := fnv.New64a()
	put := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	num := func(n int64) { _ = binary.Write(h, binary.LittleEndian, n) }

	st.RLock()
	defer st.RUnlock()
	if g.Unavailable || !hasRole(g.Roles, guildID) {
		return rules, 0, false
	}
	rules.OwnerID = g.OwnerID
	put(g.OwnerID)
	for _, r := range g.Roles {
		rules.Roles[r.ID] = r.Permissions
		put(r.ID)
		num(r.Permissions)
	}
	for _, list := range [][]*discordgo.Channel{g.Channels, g.Threads} {
		for _, c := range list {
			rule := ruleOf(c)
			rules.Channels[c.ID] = rule
			put(c.ID)
			put(c.ParentID)
			put(c.OwnerID)
			num(int64(c.Type))
			for _, ow := range rule.Overwrites {
				put(ow.ID)
				num(int64(ow.Type))
				num(ow.Allow)
				num(ow.Deny)
			}
		}
	}
	return rules, h.Sum64(), true
}

// hasRole reports whether roles hold id.
func hasRole(roles []*discordgo.Role, id string) bool {
	for _, r := range roles {
		if r != nil && r.ID == id {
			return true
		}
	}
	return false
}

// ruleOf copies what decides a channel's visibility.
func ruleOf(c *discordgo.Channel) *ChannelRule {
	r := &ChannelRule{ID: c.ID, ParentID: c.ParentID, Kind: c.Type, OwnerID: c.OwnerID}
	for _, ow := range c.PermissionOverwrites {
		if ow != nil {
			o := *ow
			r.Overwrites = append(r.Overwrites, &o)
		}
	}
	return r
}

// ruleFromStored turns a stored channel back into a rule.
func ruleFromStored(c memory.GuildChannel) *ChannelRule {
	r := &ChannelRule{ID: c.ChannelID, ParentID: c.ParentID, Kind: discordgo.ChannelType(c.Kind)}
	if c.PrivateThread {
		r.Kind = discordgo.ChannelTypeGuildPrivateThread
	}
	for _, ow := range c.Overwrites {
		r.Overwrites = append(r.Overwrites, &discordgo.PermissionOverwrite{ID: ow.ID,
			Type: discordgo.PermissionOverwriteType(ow.Type), Allow: ow.Allow, Deny: ow.Deny})
	}
	return r
}

// storedOf is the stored form of a channel of guildID.
func storedOf(guildID string, c *discordgo.Channel) memory.GuildChannel {
	s := memory.GuildChannel{GuildID: guildID, ChannelID: c.ID, ParentID: c.ParentID, Kind: int(c.Type),
		PrivateThread: c.Type == discordgo.ChannelTypeGuildPrivateThread, Overwrites: []memory.Overwrite{}}
	for _, ow := range c.PermissionOverwrites {
		if ow != nil {
			s.Overwrites = append(s.Overwrites, memory.Overwrite{ID: ow.ID, Type: int(ow.Type), Allow: ow.Allow, Deny: ow.Deny})
		}
	}
	return s
}

// Event handlers: each keeps the stored copy of the guild's channels current and drops the
// guild's cached audiences. discordgo has applied the event to its state before they run,
// but they run concurrently and in any order; so each write takes writeMu and stores what
// the state says at that moment, and a channel gone from the state is written only by its
// delete, with the rule its delete event carried.

func (b channelEvents) onGuildCreate(_ *discordgo.Session, e *discordgo.GuildCreate) {
	if e == nil || e.Guild == nil {
		return
	}
	b.channels.invalidate(e.ID)
	var ids []string
	for _, list := range [][]*discordgo.Channel{e.Channels, e.Threads} {
		for _, c := range list {
			if c != nil {
				ids = append(ids, c.ID)
			}
		}
	}
	b.storeSeen(e.ID, ids)
	b.storeRoles(e.ID)
}

func (b channelEvents) onGuildUpdate(_ *discordgo.Session, e *discordgo.GuildUpdate) {
	if e != nil && e.Guild != nil {
		b.channels.invalidate(e.ID)
		b.storeRoles(e.ID)
	}
}

func (b channelEvents) onRoleCreate(_ *discordgo.Session, e *discordgo.GuildRoleCreate) {
	if e != nil && e.GuildRole != nil {
		b.channels.invalidate(e.GuildID)
		b.storeRoles(e.GuildID)
	}
}

func (b channelEvents) onRoleUpdate(_ *discordgo.Session, e *discordgo.GuildRoleUpdate) {
	if e != nil && e.GuildRole != nil {
		b.channels.invalidate(e.GuildID)
		b.storeRoles(e.GuildID)
	}
}

func (b channelEvents) onRoleDelete(_ *discordgo.Session, e *discordgo.GuildRoleDelete) {
	if e != nil {
		b.channels.invalidate(e.GuildID)
		b.storeRoles(e.GuildID)
	}
}

func (b channelEvents) onChannelCreate(_ *discordgo.Session, e *discordgo.ChannelCreate) {
	if e != nil && e.Channel != nil && e.GuildID != "" {
		b.channels.invalidate(e.GuildID)
		b.storeSeen(e.GuildID, []string{e.ID})
	}
}

func (b channelEvents) onChannelUpdate(_ *discordgo.Session, e *discordgo.ChannelUpdate) {
	if e != nil && e.Channel != nil && e.GuildID != "" {
		b.channels.invalidate(e.GuildID)
		b.storeSeen(e.GuildID, []string{e.ID})
	}
}

func (b channelEvents) onChannelDelete(_ *discordgo.Session, e *discordgo.ChannelDelete) {
	if e != nil && e.Channel != nil {
		b.storeGone(e.Channel)
	}
}

func (b channelEvents) onThreadCreate(_ *discordgo.Session, e *discordgo.ThreadCreate) {
	if e == nil || e.Channel == nil || e.GuildID == "" {
		return
	}
	if e.Type == discordgo.ChannelTypeGuildPrivateThread && e.OwnerID != "" {
		b.channels.notePost(e.ID, e.OwnerID)
	}
	b.channels.invalidate(e.GuildID)
	b.storeSeen(e.GuildID, []string{e.ID})
}

func (b channelEvents) onThreadUpdate(_ *discordgo.Session, e *discordgo.ThreadUpdate) {
	if e != nil && e.Channel != nil && e.GuildID != "" {
		b.channels.invalidate(e.GuildID)
		b.storeSeen(e.GuildID, []string{e.ID})
	}
}

func (b channelEvents) onThreadDelete(_ *discordgo.Session, e *discordgo.ThreadDelete) {
	if e != nil && e.Channel != nil {
		b.storeGone(e.Channel)
	}
}

func (b channelEvents) onThreadListSync(_ *discordgo.Session, e *discordgo.ThreadListSync) {
	if e == nil || e.GuildID == "" {
		return
	}
	b.channels.invalidate(e.GuildID)
	ids := make([]string, 0, len(e.Threads))
	for _, c := range e.Threads {
		if c != nil {
			ids = append(ids, c.ID)
		}
	}
	b.storeSeen(e.GuildID, ids)
}

// storeSeen stores the channels of a guild as the state now holds them; channels no longer
// in the state were deleted meanwhile and are left to their delete.
func (b channelEvents) storeSeen(guildID string, ids []string) {
	b.storeChannels(func(ctx context.Context) error {
		var chans []memory.GuildChannel
		if st := b.session.State; st != nil {
			for _, id := range ids {
				c, err := st.Channel(id)
				if err != nil {
					continue
				}
				st.RLock()
				chans = append(chans, storedOf(guildID, c))
				st.RUnlock()
			}
		}
		return b.store.Channels.SaveGuildChannels(ctx, chans)
	}, "stored channel visibility", "guild_id", guildID, "channels", len(ids))
}

// storeGone records a deleted channel with the rule its delete event carries (a channel's
// last overwrites; a thread's parent), so its memories keep being limited to the people
// who could see it.
func (b channelEvents) storeGone(c *discordgo.Channel) {
	if c.GuildID == "" {
		return // a DM
	}
	b.channels.invalidate(c.GuildID)
	b.storeChannels(func(ctx context.Context) error {
		if c.PermissionOverwrites == nil && !c.IsThread() {
			// A delete without its rule: keep the stored one.
			return b.store.Channels.MarkChannelDeleted(ctx, c.GuildID, c.ID)
		}
		gone := storedOf(c.GuildID, c)
		gone.DeletedAt = b.now()
		return b.store.Channels.SaveGuildChannels(ctx, []memory.GuildChannel{gone})
	}, "recorded deleted channel", "guild_id", c.GuildID, "channel_id", c.ID)
}

// storeChannels runs one channel write as a unit of the bot's work (Shutdown waits for it
// before the store closes), one at a time, and logs its outcome.
func (b channelEvents) storeChannels(write func(ctx context.Context) error, done string, attrs ...any) {
	if !b.begin() {
		return
	}
	defer b.inflight.Done()
	ctx, cancel := context.WithTimeout(b.base, 10*time.Second)
	defer cancel()
	b.channels.writeMu.Lock()
	err := write(ctx)
	b.channels.writeMu.Unlock()
	if err != nil {
		b.log.Error("couldn't keep channel visibility: "+done, append(attrs, "err", err)...)
		return
	}
	b.log.Debug(done, attrs...)
}

// audience is what the caller of an interaction may see in its ephemeral answer: the
// channels they can view. It is computed once per interaction.
func (c *call) audience(ctx context.Context) *memory.Audience {
	if c.aud == nil {
		var roles []string
		if c.member != nil {
			roles = c.member.Roles
			if roles == nil {
				roles = []string{}
			}
		}
		c.aud = c.b.visibility.memberAudience(ctx, c.userID(), c.guildID(), c.i.ChannelID, roles)
	}
	return c.aud
}

// requireVisible refuses a /memory command on a memory learned in a channel the caller
// cannot view, with the same answer as for a memory that does not exist, so ids reveal
// nothing across channels. Memories that do not exist are left to the command to report.
func (b channelVisibility) requireVisible(ctx context.Context, c *call, owner memory.Owner, id int64) error {
	m, err := b.store.Channels.Lookup(ctx, owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	if !c.audience(ctx).Allows(m) {
		return errNotVisible(owner, id)
	}
	return nil
}

// errNotVisible reads exactly as the store's "not found".
func errNotVisible(owner memory.Owner, id int64) error {
	return memory.Errorf(memory.ENOTFOUND, "There is no memory #%d in %s.", id, describe(owner))
}
