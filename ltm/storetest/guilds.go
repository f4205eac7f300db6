package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// ChannelStore is the remembered shape of each guild's channels, kept from gateway events.
type ChannelStore interface {
	GuildChannels(ctx context.Context, guildID string) ([]memory.GuildChannel, error)
	SaveGuildChannels(ctx context.Context, chans []memory.GuildChannel) error
	MarkChannelDeleted(ctx context.Context, guildID, channelID string) error
	SaveGuildRoles(ctx context.Context, r memory.GuildRoles) error
	GuildRoles(ctx context.Context, guildID string) (memory.GuildRoles, bool, error)
	Lookup(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error)
}

// GuildStore is the servers the bot left (and their purge), and those it welcomed.
type GuildStore interface {
	RecordDeparture(ctx context.Context, guildID string, grace time.Duration) (memory.Departure, error)
	CancelDeparture(ctx context.Context, guildID string, joinedAt time.Time) (bool, error)
	Guilds(ctx context.Context) ([]memory.GuildSummary, error)
	ClaimWelcome(ctx context.Context, guildID string) (bool, error)
	ReleaseWelcome(ctx context.Context, guildID string) error
	PurgeGuild(ctx context.Context, guildID string) (memory.GuildPurge, error)
	PurgeDepartedGuilds(ctx context.Context) (memory.GuildPurge, int, error)
}

// BudgetStore counts model calls per budget key and UTC day.
type BudgetStore interface {
	ModelCalls(ctx context.Context, key, day string) (int, error)
	AddModelCalls(ctx context.Context, key, day string, n, limit int) (total int, ok bool, err error)
}

// guildsOf returns the store's channel, guild and budget aggregates, or skips the case for
// a store without them.
func guildsOf(t *testing.T, s Stores) (ChannelStore, GuildStore, BudgetStore) {
	t.Helper()
	if s.Channels == nil || s.Guilds == nil || s.Budgets == nil {
		t.Skip("the store keeps no channels, guilds or budgets")
	}
	return s.Channels, s.Guilds, s.Budgets
}

// testChannels: channels round trip with their rules; a deleted channel keeps its rule, a
// channel seen again is live with its new one, a channel saved as deleted keeps its date,
// and a channel without ids saves nothing of its call.
func testChannels(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ch, _, _ := guildsOf(t, s)
	ctx := t.Context()
	mods := memory.GuildChannel{GuildID: "g1", ChannelID: "mods", Kind: 0,
		Overwrites: []memory.Overwrite{{ID: "g1", Type: 0, Deny: 1024}, {ID: "r-mod", Type: 0, Allow: 1024}}}
	thread := memory.GuildChannel{GuildID: "g1", ChannelID: "t1", ParentID: "mods", Kind: 12, PrivateThread: true}
	other := memory.GuildChannel{GuildID: "g2", ChannelID: "general"}
	if err := ch.SaveGuildChannels(ctx, []memory.GuildChannel{mods, thread, other}); err != nil {
		t.Fatal(err)
	}
	got, err := ch.GuildChannels(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ChannelID != "mods" || len(got[0].Overwrites) != 2 || got[0].Overwrites[1] != mods.Overwrites[1] ||
		got[1].ParentID != "mods" || !got[1].PrivateThread || got[1].Kind != 12 || got[1].Overwrites == nil || !got[0].DeletedAt.IsZero() ||
		!got[0].UpdatedAt.Equal(s.Clock.Now()) {
		t.Fatalf("channels of g1 = %+v", got)
	}
	t.Run("DeleteKeepsTheRule", func(t *testing.T) {
		s.Clock.Advance(time.Minute)
		if err := ch.MarkChannelDeleted(ctx, "g1", "mods"); err != nil {
			t.Fatal(err)
		}
		if err := ch.MarkChannelDeleted(ctx, "g1", "never-seen"); err != nil {
			t.Fatal(err)
		}
		got, _ := ch.GuildChannels(ctx, "g1")
		if len(got) != 2 || !got[0].DeletedAt.Equal(s.Clock.Now()) || len(got[0].Overwrites) != 2 || !got[1].DeletedAt.IsZero() {
			t.Fatalf("after delete: %+v", got)
		}
		mods.Overwrites = nil
		if err := ch.SaveGuildChannels(ctx, []memory.GuildChannel{mods}); err != nil {
			t.Fatal(err)
		}
		got, _ = ch.GuildChannels(ctx, "g1")
		if !got[0].DeletedAt.IsZero() || len(got[0].Overwrites) != 0 {
			t.Fatalf("after seeing it again: %+v", got[0])
		}
	})
	t.Run("SavedAsDeleted", func(t *testing.T) {
		gone := memory.GuildChannel{GuildID: "g3", ChannelID: "old", Overwrites: []memory.Overwrite{{ID: "g3", Deny: 1024}},
			DeletedAt: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}
		if err := ch.SaveGuildChannels(ctx, []memory.GuildChannel{gone}); err != nil {
			t.Fatal(err)
		}
		got, _ := ch.GuildChannels(ctx, "g3")
		if len(got) != 1 || !got[0].DeletedAt.Equal(gone.DeletedAt) || got[0].Overwrites[0] != gone.Overwrites[0] {
			t.Fatalf("channel saved as deleted = %+v", got)
		}
	})
	t.Run("ErrMissingIDsSavesNothing", func(t *testing.T) {
		fresh := memory.GuildChannel{GuildID: "g4", ChannelID: "new"}
		if err := ch.SaveGuildChannels(ctx, []memory.GuildChannel{fresh, {GuildID: "g4"}}); err == nil {
			t.Fatal("a channel without an id was saved")
		}
		if got, _ := ch.GuildChannels(ctx, "g4"); len(got) != 0 {
			t.Fatalf("a refused call saved %+v", got)
		}
	})
	t.Run("RolesRoundTrip", func(t *testing.T) {
		if _, ok, err := ch.GuildRoles(ctx, "g1"); err != nil || ok {
			t.Fatalf("roles of a guild never saved: ok %v %v", ok, err)
		}
		roles := memory.GuildRoles{GuildID: "g1", OwnerID: "u-owner", Roles: map[string]int64{"g1": 1024 | 2048, "r-mod": 1024, "r-admin": 8}}
		if err := ch.SaveGuildRoles(ctx, roles); err != nil {
			t.Fatal(err)
		}
		got, ok, err := ch.GuildRoles(ctx, "g1")
		if err != nil || !ok || got.OwnerID != "u-owner" || len(got.Roles) != 3 || got.Roles["g1"] != 3072 ||
			got.Roles["r-admin"] != 8 || !got.UpdatedAt.Equal(s.Clock.Now()) {
			t.Fatalf("roles of g1 = %+v ok %v %v", got, ok, err)
		}
		// A role deleted and the ownership handed over: the new set replaces the old.
		s.Clock.Advance(time.Minute)
		roles = memory.GuildRoles{GuildID: "g1", OwnerID: "u-new", Roles: map[string]int64{"g1": 1024}}
		if err := ch.SaveGuildRoles(ctx, roles); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := ch.GuildRoles(ctx, "g1"); got.OwnerID != "u-new" || len(got.Roles) != 1 || !got.UpdatedAt.Equal(s.Clock.Now()) {
			t.Fatalf("roles of g1 after an update = %+v", got)
		}
		if _, ok, _ := ch.GuildRoles(ctx, "g2"); ok {
			t.Error("another guild has g1's roles")
		}
		// Roles without @everyone would claim to know what they do not.
		if err := ch.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: "g2", Roles: map[string]int64{"r-mod": 1024}}); err == nil {
			t.Error("roles without the @everyone role were saved")
		}
		if err := ch.SaveGuildRoles(ctx, memory.GuildRoles{Roles: map[string]int64{"": 1024}}); err == nil {
			t.Error("roles without a guild id were saved")
		}
		if _, ok, _ := ch.GuildRoles(ctx, "g2"); ok {
			t.Error("a refused save stored roles")
		}
	})
	t.Run("LookupReadsForgottenInScopeOnly", func(t *testing.T) {
		m := mustRemember(t, s, server("g1", "The mods meet on Mondays"))
		mustForget(t, s, m.Owner(), m.ID)
		got, err := ch.Lookup(ctx, m.Owner(), m.ID)
		if err != nil || got.ID != m.ID || !got.Deleted() {
			t.Fatalf("lookup of a forgotten memory: %+v %v", got, err)
		}
		_, err = ch.Lookup(ctx, memory.ServerOwner("g2"), m.ID)
		wantCode(t, err, memory.ENOTFOUND)
	})
}

// seedGuild gives guild the rows kioku keeps about a server through the stores' own
// methods, and returns its memories: a server memory, a forgotten one and a member's
// personal memory that originated there.
func seedGuild(t *testing.T, s Stores, guild string) []*memory.Memory {
	t.Helper()
	ctx := t.Context()
	ch, g, b := guildsOf(t, s)
	srv := mustRemember(t, s, server(guild, "Raids of "+guild+" are on Friday"))
	forgotten := mustRemember(t, s, server(guild, "Old rule of "+guild))
	mustForget(t, s, forgotten.Owner(), forgotten.ID)
	mine := mustRemember(t, s, personal("alice", guild, "Alice plays healer in "+guild))
	if _, err := s.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: guild, ChannelID: guild + "-c1", UserID: "alice",
		Role: memory.RoleUser, Content: "talk in " + guild, MessageID: guild + "-m1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", guild+"/c1", map[string]string{"guild_id": guild, "channel_id": guild + "-c1"},
		memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ch.SaveGuildChannels(ctx, []memory.GuildChannel{{GuildID: guild, ChannelID: guild + "-c1"}}); err != nil {
		t.Fatal(err)
	}
	if err := ch.SaveGuildRoles(ctx, memory.GuildRoles{GuildID: guild, OwnerID: "owner-" + guild, Roles: map[string]int64{guild: 1024}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: guild, SelfTeaching: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Settings.SetChannelLearning(ctx, guild, guild+"-vent", false); err != nil {
		t.Fatal(err)
	}
	if ok, err := g.ClaimWelcome(ctx, guild); err != nil || !ok {
		t.Fatalf("welcome of %s: %v %v", guild, ok, err)
	}
	if _, _, err := b.AddModelCalls(ctx, memory.ServerOwner(guild).Key(), s.Clock.Now().Format(time.DateOnly), 2, 0); err != nil {
		t.Fatal(err)
	}
	return []*memory.Memory{srv, forgotten, mine}
}

// guildHolds reports what the stores still show of guild.
func guildHolds(t *testing.T, s Stores, guild string, mems []*memory.Memory) map[string]int {
	t.Helper()
	ctx := t.Context()
	ch, g, b := guildsOf(t, s)
	n := map[string]int{}
	for _, m := range mems {
		if _, err := ch.Lookup(ctx, m.Owner(), m.ID); err == nil {
			n["memories"]++
		} else if memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Fatal(err)
		}
	}
	turns, err := s.Transcripts.TurnsAfter(ctx, guild, guild+"-c1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	n["transcripts"] = len(turns)
	jobs, err := s.Jobs.FindJobs(ctx, memory.JobFilter{GuildID: guild})
	if err != nil {
		t.Fatal(err)
	}
	n["jobs"] = len(jobs)
	chans, err := ch.GuildChannels(ctx, guild)
	if err != nil {
		t.Fatal(err)
	}
	n["channels"] = len(chans)
	if _, ok, err := ch.GuildRoles(ctx, guild); err != nil {
		t.Fatal(err)
	} else if ok {
		n["roles"] = 1
	}
	gs, err := s.Settings.GuildSettings(ctx, guild)
	if err != nil {
		t.Fatal(err)
	}
	if gs.SelfTeaching {
		n["settings"] = 1
	}
	n["learning channels"] = len(gs.LearningChannels)
	if n["model calls"], err = b.ModelCalls(ctx, memory.ServerOwner(guild).Key(), s.Clock.Now().Format(time.DateOnly)); err != nil {
		t.Fatal(err)
	}
	list, err := g.Guilds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range list {
		if sum.GuildID == guild {
			n["listed"] = 1
			if sum.Departure != nil {
				n["departure"] = 1
			}
		}
	}
	return n
}

// testGuildPurge: a purge deletes everything of the guild that any read shows (memories of
// every state, transcripts, jobs, channels, roles, settings, the model-call count, the welcome),
// leaves other guilds and the same members' DM-origin memories alone, and finds nothing the
// second time.
func testGuildPurge(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	_, g, _ := guildsOf(t, s)
	ctx := t.Context()
	gone := seedGuild(t, s, "g1")
	kept := seedGuild(t, s, "g2")
	dm := mustRemember(t, s, personal("alice", "", "Alice told me in a DM that she mains healer"))
	before := guildHolds(t, s, "g2", kept)
	for _, what := range []string{"memories", "transcripts", "jobs", "channels", "roles", "settings", "learning channels",
		"model calls", "listed"} {
		if before[what] == 0 {
			t.Fatalf("seeding left no %s: %v", what, before)
		}
	}
	// Web sessions: one listing g1 (revoked with it), one listing g12 and g2 (kept).
	if s.Sessions != nil {
		for token, guilds := range map[string][]string{"in-g1": {"g2", "g1"}, "in-g12": {"g12", "g2"}} {
			if _, err := s.Sessions.Create(ctx, memory.WebSession{TokenHash: token, UserID: "u-" + token, GuildIDs: guilds,
				CSRF: "c"}, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := g.PurgeGuild(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Memories != 3 || res.Transcripts != 1 || res.Jobs != 1 || res.History < 4 {
		t.Errorf("purge counted %+v", res)
	}
	if s.Sessions != nil {
		if _, err := s.Sessions.Lookup(ctx, "in-g1"); memory.ErrorCode(err) != memory.ENOTFOUND || res.Sessions != 1 {
			t.Errorf("the web session listing g1 after its purge: %v (purge counted %d sessions)", err, res.Sessions)
		}
		if _, err := s.Sessions.Lookup(ctx, "in-g12"); err != nil {
			t.Errorf("a web session listing g12, not g1, was revoked: %v", err)
		}
	}
	for what, n := range guildHolds(t, s, "g1", gone) {
		if n != 0 {
			t.Errorf("%d %s of g1 left", n, what)
		}
	}
	if got := guildHolds(t, s, "g2", kept); len(got) != len(before) {
		t.Errorf("g2 after g1's purge: %v, was %v", got, before)
	} else {
		for what, n := range before {
			if got[what] != n {
				t.Errorf("g2's %s: %d, was %d", what, got[what], n)
			}
		}
	}
	if !isLive(t, s, dm.Owner(), dm.ID) {
		t.Error("a DM-origin memory was purged with the guild")
	}
	if ok, err := g.ClaimWelcome(ctx, "g1"); err != nil || !ok {
		t.Errorf("a purged guild added again is not welcomed again: %v %v", ok, err)
	}
	if res, err := g.PurgeGuild(ctx, "g1"); err != nil || res != (memory.GuildPurge{}) {
		t.Errorf("second purge: %+v %v", res, err)
	}
	if _, err := g.PurgeGuild(ctx, ""); err == nil {
		t.Error("a purge without a guild id ran")
	}
}

// testGuildDepartures: a departure is cancelled by a re-add before its purge (not by the
// connection's own late listing, nor once due), a repeated departure keeps its first date,
// and the due purge deletes only the due guild.
func testGuildDepartures(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	_, g, _ := guildsOf(t, s)
	ctx := t.Context()
	left := seedGuild(t, s, "g1")
	stays := seedGuild(t, s, "g2")
	const grace = 30 * 24 * time.Hour

	d, err := g.RecordDeparture(ctx, "g1", grace)
	if err != nil {
		t.Fatal(err)
	}
	if !d.LeftAt.Equal(s.Clock.Now()) || !d.PurgeAfter.Equal(s.Clock.Now().Add(grace)) {
		t.Errorf("departure %+v, want left now and purged after %s", d, s.Clock.Now().Add(grace))
	}
	if cancelled, err := g.CancelDeparture(ctx, "g1", d.LeftAt.Add(-24*time.Hour)); err != nil || cancelled {
		t.Fatalf("a GUILD_CREATE from before the removal cancelled it: %v %v", cancelled, err)
	}
	s.Clock.Advance(grace - time.Minute)
	if cancelled, err := g.CancelDeparture(ctx, "g1", s.Clock.Now()); err != nil || !cancelled {
		t.Fatalf("cancel before the purge: %v %v", cancelled, err)
	}
	if cancelled, _ := g.CancelDeparture(ctx, "g2", time.Time{}); cancelled {
		t.Error("cancelled a departure that was never recorded")
	}
	s.Clock.Advance(time.Hour)
	if _, n, err := g.PurgeDepartedGuilds(ctx); err != nil || n != 0 {
		t.Fatalf("purged %d guilds after the bot came back: %v", n, err)
	}

	first, err := g.RecordDeparture(ctx, "g1", grace)
	if err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(24 * time.Hour)
	again, err := g.RecordDeparture(ctx, "g1", grace)
	if err != nil || !again.PurgeAfter.Equal(first.PurgeAfter) || !again.LeftAt.Equal(first.LeftAt) {
		t.Fatalf("repeated departure: %+v %v, want %+v", again, err, first)
	}
	if _, n, _ := g.PurgeDepartedGuilds(ctx); n != 0 {
		t.Fatal("purged before the grace period ended")
	}
	if _, err := g.RecordDeparture(ctx, "g2", 2*grace); err != nil {
		t.Fatal(err)
	}
	guilds, err := g.Guilds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(guilds) != 2 || guilds[0].GuildID != "g1" || guilds[0].Departure == nil || !guilds[0].Departure.PurgeAfter.Equal(first.PurgeAfter) ||
		guilds[0].ServerMemories != 1 || guilds[0].PersonalMemories != 1 || guilds[0].Forgotten != 1 || guilds[0].Transcripts != 1 {
		t.Errorf("guilds = %+v", guilds)
	}

	s.Clock.Advance(grace)
	if cancelled, _ := g.CancelDeparture(ctx, "g1", time.Time{}); cancelled {
		t.Error("a due departure was cancelled")
	}
	res, n, err := g.PurgeDepartedGuilds(ctx)
	if err != nil || n != 1 || res.Memories != 3 {
		t.Fatalf("purge: %+v, %d guilds, %v", res, n, err)
	}
	if got := guildHolds(t, s, "g1", left); got["memories"] != 0 || got["departure"] != 0 || got["listed"] != 0 {
		t.Errorf("g1 after its purge: %v", got)
	}
	if got := guildHolds(t, s, "g2", stays); got["memories"] != 3 || got["departure"] != 1 {
		t.Errorf("g2, not due yet: %v", got)
	}
	if _, err := g.RecordDeparture(ctx, "", grace); err == nil {
		t.Error("a departure without a guild was recorded")
	}
	if _, err := g.RecordDeparture(ctx, "g3", -time.Hour); err == nil {
		t.Error("a departure with a negative grace was recorded")
	}
}

// testWelcome: a guild is welcomed once; a released claim is claimed again.
func testWelcome(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	_, g, _ := guildsOf(t, s)
	ctx := t.Context()
	for i, want := range []bool{true, false} {
		if ok, err := g.ClaimWelcome(ctx, "g1"); err != nil || ok != want {
			t.Fatalf("claim %d: %v %v, want %v", i, ok, err, want)
		}
	}
	if err := g.ReleaseWelcome(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := g.ClaimWelcome(ctx, "g1"); err != nil || !ok {
		t.Fatalf("claim after release: %v %v", ok, err)
	}
	if ok, err := g.ClaimWelcome(ctx, "g2"); err != nil || !ok {
		t.Fatalf("another guild's claim: %v %v", ok, err)
	}
	if _, err := g.ClaimWelcome(ctx, ""); err == nil {
		t.Error("a welcome without a guild id was claimed")
	}
}

// testModelCallBudget: calls are counted per key and day; with a limit the last call is
// taken once and refused after, a call counted without a limit always lands, and a new day
// starts from zero.
func testModelCallBudget(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	_, _, b := guildsOf(t, s)
	ctx := t.Context()
	const day1, day2 = "2025-03-01", "2025-03-02"
	for i := 1; i <= 2; i++ {
		total, ok, err := b.AddModelCalls(ctx, "g:1", day1, 1, 2)
		if err != nil || !ok || total != i {
			t.Fatalf("call %d: total %d ok %v %v", i, total, ok, err)
		}
	}
	if total, ok, err := b.AddModelCalls(ctx, "g:1", day1, 1, 2); err != nil || ok || total != 2 {
		t.Fatalf("call over the limit: total %d ok %v %v; want refused at 2", total, ok, err)
	}
	if total, ok, err := b.AddModelCalls(ctx, "g:1", day1, 3, 0); err != nil || !ok || total != 5 {
		t.Fatalf("calls counted without a limit: total %d ok %v %v; want 5", total, ok, err)
	}
	if total, ok, err := b.AddModelCalls(ctx, "g:3", day1, 3, 2); err != nil || ok || total != 0 {
		t.Fatalf("a first count over the limit: total %d ok %v %v; want refused at 0", total, ok, err)
	}
	if n, err := b.ModelCalls(ctx, "g:2", day1); err != nil || n != 0 {
		t.Fatalf("another key: %d %v", n, err)
	}
	if n, err := b.ModelCalls(ctx, "g:1", day2); err != nil || n != 0 {
		t.Fatalf("the next day before any call: %d %v", n, err)
	}
	if total, ok, err := b.AddModelCalls(ctx, "g:1", day2, 1, 2); err != nil || !ok || total != 1 {
		t.Fatalf("first call of the next day: total %d ok %v %v", total, ok, err)
	}
	if n, err := b.ModelCalls(ctx, "g:1", day1); err != nil || n != 0 {
		t.Fatalf("the previous day is no longer counted: %d %v", n, err)
	}
	if total, ok, err := b.AddModelCalls(ctx, "g:1", day2, 5, 2); err != nil || ok || total != 1 {
		t.Fatalf("a refused call of the new day: total %d ok %v %v; want refused at 1", total, ok, err)
	}
}
