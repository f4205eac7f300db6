package ltm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// seedGuild gives guild every kind of row kioku keeps about a server, with distinct words,
// and returns its memories.
func seedGuild(t *testing.T, s *ltm.Store, guild string) []*memory.Memory {
	t.Helper()
	db := rawDB(t, s)
	srv := testkit.MustRemember(t, s, withSource(server(guild, "Raids of "+guild+" are on Friday (金曜日)"), memory.SourcePipeline))
	forgotten := testkit.MustRemember(t, s, server(guild, "Old rule of "+guild))
	if _, err := s.Memories.Forget(ctx, forgotten.Owner(), []int64{forgotten.ID}, "test", "test"); err != nil {
		t.Fatal(err)
	}
	mine := testkit.MustRemember(t, s, personal("alice", guild, "Alice plays healer in "+guild))
	addEvidence(t, db, srv.ID, "alice", guild+"-m1")
	addEvidence(t, db, mine.ID, "alice", guild+"-m2")
	for _, m := range []*memory.Memory{srv, mine} {
		mustExec(t, db, `INSERT INTO embeddings (content_hash, model, dims, vector, created_at) VALUES (?, 'e', 1, x'00000000', 0)`, m.Hash)
	}
	mustTurn(t, s, memory.Turn{GuildID: guild, ChannelID: guild + "-c1", UserID: "alice", Content: "talk in " + guild, MessageID: guild + "-m1"})
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", guild+"/c1", channelCheckpointPayload(guild, guild+"-c1"), memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `INSERT INTO pipeline_cursors (guild_id, channel_id, last_turn_id, updated_at) VALUES (?, ?, 1, 0)`, guild, guild+"-c1")
	mustExec(t, db, `INSERT INTO guild_channels (guild_id, channel_id, updated_at) VALUES (?, ?, 0)`, guild, guild+"-c1")
	if err := s.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: guild, SelfTeaching: true}); err != nil {
		t.Fatal(err)
	}
	return []*memory.Memory{srv, forgotten, mine}
}

// guildRows counts the rows of each table that belong to guild.
func guildRows(t *testing.T, s *ltm.Store, guild string, mems []*memory.Memory) map[string]int {
	t.Helper()
	db := rawDB(t, s)
	ids := fmt.Sprintf("%d, %d, %d", mems[0].ID, mems[1].ID, mems[2].ID)
	return map[string]int{
		"memories":      count(t, db, `SELECT count(*) FROM memories WHERE guild_id = ?`, guild),
		"history":       count(t, db, `SELECT count(*) FROM memory_history WHERE memory_id IN (`+ids+`)`),
		"evidence":      count(t, db, `SELECT count(*) FROM memory_evidence WHERE memory_id IN (`+ids+`)`),
		"embeddings":    count(t, db, `SELECT count(*) FROM embeddings WHERE content_hash IN (?, ?)`, mems[0].Hash, mems[2].Hash),
		"transcripts":   count(t, db, `SELECT count(*) FROM transcripts WHERE guild_id = ?`, guild),
		"jobs":          count(t, db, `SELECT count(*) FROM memory_jobs WHERE json_extract(payload, '$.guild_id') = ?`, guild),
		"cursors":       count(t, db, `SELECT count(*) FROM pipeline_cursors WHERE guild_id = ?`, guild),
		"channels":      count(t, db, `SELECT count(*) FROM guild_channels WHERE guild_id = ?`, guild),
		"settings":      count(t, db, `SELECT count(*) FROM guild_settings WHERE guild_id = ?`, guild),
		"fts":           count(t, db, `SELECT count(*) FROM memories_tri WHERE memories_tri MATCH ?`, `"of `+guild+`"`),
		"departures":    count(t, db, `SELECT count(*) FROM guild_departures WHERE guild_id = ?`, guild),
		"confirmations": count(t, db, `SELECT count(*) FROM confirmations WHERE scope_key = ?`, memory.ServerOwner(guild).Key()),
	}
}

func TestPurgeGuild(t *testing.T) {
	s := testkit.MustOpenStore(t)
	gone := seedGuild(t, s, "g1")
	kept := seedGuild(t, s, "g2")
	db := rawDB(t, s)
	// A pending forget preview of g1's server memory, listing what it would forget.
	if _, err := s.Confirmations.PreviewForget(ctx, memory.ServerOwner("g1"), "Raids", "test", 0); err != nil {
		t.Fatal(err)
	}
	if n := guildRows(t, s, "g1", gone)["confirmations"]; n != 1 {
		t.Fatalf("%d pending confirmations for g1, want the preview's", n)
	}
	// Alice's DM-origin memory stays; Bob's says what her g1 memory says (the same
	// content hash), so the vector they share must stay.
	dm := testkit.MustRemember(t, s, personal("alice", "", "Alice told me in a DM that she mains healer"))
	addEvidence(t, db, dm.ID, "alice", "dm-m1")
	shared := testkit.MustRemember(t, s, personal("bob", "", "Alice plays healer in g1"))
	mustTurn(t, s, memory.Turn{ChannelID: "dm1", UserID: "alice", Content: "a DM", MessageID: "dm-m1"})
	// More transcript than one batch holds.
	for i := range 1200 {
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "g1-c2", UserID: "bob", Content: fmt.Sprintf("chatter %d", i)})
	}
	beforeKept := guildRows(t, s, "g2", kept)
	for table, n := range beforeKept {
		if n == 0 && table != "departures" && table != "confirmations" {
			t.Fatalf("seeding wrote no %s rows", table)
		}
	}
	if _, err := s.Guilds.RecordDeparture(ctx, "g1", time.Hour); err != nil {
		t.Fatal(err)
	}

	res, err := s.Guilds.PurgeGuild(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Memories != 3 || res.Transcripts != 1201 || res.Jobs != 1 || res.Evidence != 2 || res.Embeddings != 1 {
		t.Errorf("purge counted %+v", res)
	}
	for table, n := range guildRows(t, s, "g1", gone) {
		want := 0
		if table == "embeddings" {
			want = 1 // the vector alice's DM memory shares
		}
		if n != want {
			t.Errorf("%d %s rows of g1 left, want %d", n, table, want)
		}
	}
	if got := guildRows(t, s, "g2", kept); fmt.Sprint(got) != fmt.Sprint(beforeKept) {
		t.Errorf("g2's rows changed: %v, were %v", got, beforeKept)
	}
	for _, m := range []*memory.Memory{dm, shared} {
		if !live(t, s, m.Owner(), m.ID) {
			t.Errorf("DM-origin memory %q was purged with the guild", m.Content)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM memory_evidence WHERE memory_id = ?`, dm.ID); n != 1 {
		t.Error("the DM memory's evidence was purged")
	}
	if n := count(t, db, `SELECT count(*) FROM transcripts WHERE guild_id = ''`); n != 1 {
		t.Error("the DM transcript was purged")
	}
	mems, _, err := s.Memories.List(ctx, memory.PersonalOwner("alice"), memory.ListOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 2 {
		t.Errorf("alice has %d personal memories, want her DM one and her g2 one", len(mems))
	}
	// Running it again finds nothing left.
	if res, err := s.Guilds.PurgeGuild(ctx, "g1"); err != nil || res != (memory.GuildPurge{}) {
		t.Errorf("second purge: %+v %v", res, err)
	}
}

func TestGuildDepartures(t *testing.T) {
	s := testkit.MustOpenStore(t)
	clock := testkit.NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s.Now = clock.Now
	left := seedGuild(t, s, "g1")
	stays := seedGuild(t, s, "g2")
	const grace = 30 * 24 * time.Hour

	// Removed, then added back in time: nothing is deleted.
	d, err := s.Guilds.RecordDeparture(ctx, "g1", grace)
	if err != nil {
		t.Fatal(err)
	}
	if !d.PurgeAfter.Equal(clock.Now().Add(grace)) {
		t.Errorf("purge after %s, want %s", d.PurgeAfter, clock.Now().Add(grace))
	}
	// The connection's own GUILD_CREATE, handled after the removal, says the bot joined
	// long before it left: the departure stays.
	if cancelled, err := s.Guilds.CancelDeparture(ctx, "g1", d.LeftAt.Add(-24*time.Hour)); err != nil || cancelled {
		t.Fatalf("a GUILD_CREATE from before the removal cancelled it: %v %v", cancelled, err)
	}
	clock.Advance(grace - time.Minute)
	if cancelled, err := s.Guilds.CancelDeparture(ctx, "g1", clock.Now()); err != nil || !cancelled {
		t.Fatalf("cancel before the purge: %v %v", cancelled, err)
	}
	if cancelled, _ := s.Guilds.CancelDeparture(ctx, "g2", time.Time{}); cancelled {
		t.Error("cancelled a departure that was never recorded")
	}
	clock.Advance(time.Hour)
	if _, n, err := s.Guilds.PurgeDepartedGuilds(ctx); err != nil || n != 0 {
		t.Fatalf("purged %d guilds after the bot came back: %v", n, err)
	}

	// Removed again: a repeated event keeps the first date.
	first, err := s.Guilds.RecordDeparture(ctx, "g1", grace)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	again, err := s.Guilds.RecordDeparture(ctx, "g1", grace)
	if err != nil || !again.PurgeAfter.Equal(first.PurgeAfter) {
		t.Fatalf("repeated departure: %+v %v, want purge after %s", again, err, first.PurgeAfter)
	}
	if _, n, _ := s.Guilds.PurgeDepartedGuilds(ctx); n != 0 {
		t.Fatal("purged before the grace period ended")
	}
	if _, err := s.Guilds.RecordDeparture(ctx, "g2", 2*grace); err != nil {
		t.Fatal(err)
	}
	guilds, err := s.Guilds.Guilds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(guilds) != 2 || guilds[0].GuildID != "g1" || guilds[0].Departure == nil || guilds[0].ServerMemories != 1 ||
		guilds[0].PersonalMemories != 1 || guilds[0].Forgotten != 1 || guilds[0].Transcripts != 1 {
		t.Errorf("guilds = %+v", guilds)
	}

	// Past the grace period, coming back is too late and the purge runs.
	clock.Advance(grace)
	if cancelled, _ := s.Guilds.CancelDeparture(ctx, "g1", time.Time{}); cancelled {
		t.Error("a due departure was cancelled")
	}
	res, n, err := s.Guilds.PurgeDepartedGuilds(ctx)
	if err != nil || n != 1 || res.Memories != 3 {
		t.Fatalf("purge: %+v, %d guilds, %v", res, n, err)
	}
	if got := guildRows(t, s, "g1", left); got["memories"] != 0 || got["departures"] != 0 {
		t.Errorf("g1 after its purge: %v", got)
	}
	if got := guildRows(t, s, "g2", stays); got["memories"] != 3 || got["departures"] != 1 {
		t.Errorf("g2, not due yet: %v", got)
	}
	if _, err := s.Guilds.RecordDeparture(ctx, "", grace); err == nil {
		t.Error("a departure without a guild was recorded")
	}
}
