package fakediscord_test

import (
	"fmt"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// guildOnShard returns a guild id that Discord's formula puts on shard of count.
func guildOnShard(n, shard, count int) string {
	return fmt.Sprint(uint64(n*count+shard) << 22)
}

func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		guild        string
		count, shard int
	}{
		{guildOnShard(7, 0, 2), 2, 0},
		{guildOnShard(7, 1, 2), 2, 1},
		{guildOnShard(3, 2, 3), 3, 2},
		{"", 4, 0}, // DMs go to shard 0
		{guildOnShard(7, 1, 2), 1, 0},
		{"81384788765712384", 16, 81384788765712384 >> 22 % 16},
	} {
		if got := fakediscord.ShardOf(tc.guild, tc.count); got != tc.shard {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", tc.guild, tc.count, got, tc.shard)
		}
	}
}

// TestShardedGateway connects two real discordgo sessions as shards 0 and 1 of 2: each gets
// READY and GUILD_CREATE for its own guilds only, and each guild's messages arrive on its
// shard alone; DMs go to shard 0.
func TestShardedGateway(t *testing.T) {
	fake := fakediscord.New(t, fakediscord.WithRecommendedShards(2))
	g0, g1 := guildOnShard(5, 0, 2), guildOnShard(5, 1, 2)
	fake.SetGuild(&discordgo.Guild{ID: g0, Name: "zero"})
	fake.SetGuild(&discordgo.Guild{ID: g1, Name: "one"})

	type seen struct {
		messages chan *discordgo.MessageCreate
		guilds   chan string
		ready    chan []string // the guild ids of READY, copied: the state keeps changing them
	}
	var shards [2]seen
	for id := range shards {
		s, err := bot.NewSession("test-token", fake.URL())
		if err != nil {
			t.Fatal(err)
		}
		gb, err := s.GatewayBot()
		if err != nil {
			t.Fatal(err)
		}
		if gb.Shards != 2 {
			t.Fatalf("GET /gateway/bot recommends %d shards, want 2", gb.Shards)
		}
		s.ShardID, s.ShardCount = id, gb.Shards
		s.SyncEvents = true // handlers in wire order, so the order of arrival can be asserted
		sh := seen{make(chan *discordgo.MessageCreate, 16), make(chan string, 16), make(chan []string, 1)}
		shards[id] = sh
		s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { sh.messages <- m })
		s.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) { sh.guilds <- g.ID })
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
			ids := make([]string, 0, len(r.Guilds))
			for _, g := range r.Guilds {
				ids = append(ids, g.ID)
			}
			sh.ready <- ids
		})
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("session.Close: %v", err)
			}
		})
	}
	if err := fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := fake.Shards(); len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Fatalf("connected shards = %v, want shards 0 and 1 of 2", got)
	}
	for id, want := range []string{g0, g1} {
		if ids := receive(t, shards[id].ready); len(ids) != 1 || ids[0] != want {
			t.Errorf("shard %d READY guilds = %v, want only %s", id, ids, want)
		}
		if g := receive(t, shards[id].guilds); g != want {
			t.Errorf("shard %d got GUILD_CREATE for %s, want %s", id, g, want)
		}
	}

	send := func(guild string) {
		t.Helper()
		ch := fake.NewSnowflake()
		if err := fake.DispatchMessage(&discordgo.Message{ID: fake.NewSnowflake(), ChannelID: ch, GuildID: guild,
			Content: "hi " + guild, Author: &discordgo.User{ID: "42"}}); err != nil {
			t.Fatal(err)
		}
	}
	send(g1)
	send(g0)
	send("") // a DM
	for id, want := range [][]string{{g0, ""}, {g1}} {
		for _, g := range want {
			if m := receive(t, shards[id].messages); m.GuildID != g {
				t.Errorf("shard %d got a message of guild %q, want %q", id, m.GuildID, g)
			}
		}
	}
	// Nothing else arrived anywhere: a last message to each shard's guild is the next one it
	// sees, so no message went to two shards.
	send(g0)
	send(g1)
	for id, g := range []string{g0, g1} {
		if m := receive(t, shards[id].messages); m.GuildID != g {
			t.Errorf("shard %d got an extra message of guild %q", id, m.GuildID)
		}
	}
}
