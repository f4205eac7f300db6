package bot_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// /memory search narrows its results with the filter options, says when filters left
// nothing, and refuses a bad date or a reversed range with a message naming the option.
func TestMemorySearchFilters(t *testing.T) {
	store := testkit.MustOpenStore(t)
	day := func(d int) time.Time { return time.Date(2026, 4, d, 12, 0, 0, 0, time.UTC) }
	store.Now = testkit.NewClock(day(30)).Now
	tb := newTestBotOn(t, store)
	const guild, channel = "800", "801"
	alice := tb.fake.NewUser("alice")
	mk := func(m memory.Memory) int64 {
		m.Scope, m.GuildID = memory.ScopeServer, guild
		return testkit.MustRemember(t, store, m).ID
	}
	early := mk(memory.Memory{Content: "canoe trip planned early", CreatedAt: day(1), Provenance: memory.Provenance{AuthorID: alice.ID}})
	decided := mk(memory.Memory{Content: "canoe trip decided for the lake", Type: memory.TypeDecision, CreatedAt: day(10),
		Provenance: memory.Provenance{AuthorID: "9001"}})
	tagged := mk(memory.Memory{Content: "canoe trip gear list", Tags: []string{"gear"}, Pinned: true, CreatedAt: day(28),
		Provenance: memory.Provenance{AuthorID: alice.ID}})
	// Another server's memory by the same author never shows.
	testkit.MustRemember(t, store, memory.Memory{Scope: memory.ScopeServer, GuildID: "899", Content: "canoe trip elsewhere",
		Provenance: memory.Provenance{AuthorID: alice.ID}})

	opt := func(name string, typ discordgo.ApplicationCommandOptionType, v any) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: typ, Value: v}
	}
	str := func(name, v string) *discordgo.ApplicationCommandInteractionDataOption {
		return opt(name, discordgo.ApplicationCommandOptionString, v)
	}
	search := func(opts ...*discordgo.ApplicationCommandInteractionDataOption) (ids []int64, text string) {
		t.Helper()
		opts = append([]*discordgo.ApplicationCommandInteractionDataOption{str("query", "canoe"), str("scope", "server")}, opts...)
		data := discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "search", Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}}
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, alice, 0, data))
		if len(msg.Embeds) == 0 {
			return nil, msg.Content
		}
		for _, m := range regexp.MustCompile(`#(\d+)`).FindAllStringSubmatch(msg.Embeds[0].Description, -1) {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids, msg.Embeds[0].Description
	}

	cases := []struct {
		name string
		opts []*discordgo.ApplicationCommandInteractionDataOption
		want []int64
	}{
		{"NoFilter", nil, []int64{early, decided, tagged}},
		{"Type", []*discordgo.ApplicationCommandInteractionDataOption{str("type", "decision")}, []int64{decided}},
		{"Tag", []*discordgo.ApplicationCommandInteractionDataOption{str("tag", "Gear")}, []int64{tagged}},
		{"Since", []*discordgo.ApplicationCommandInteractionDataOption{str("since", "2026-04-05")}, []int64{decided, tagged}},
		{"UntilAge", []*discordgo.ApplicationCommandInteractionDataOption{str("until", "7d")}, []int64{early, decided}},
		{"Pinned", []*discordgo.ApplicationCommandInteractionDataOption{opt("pinned", discordgo.ApplicationCommandOptionBoolean, true)}, []int64{tagged}},
		{"Author", []*discordgo.ApplicationCommandInteractionDataOption{opt("author", discordgo.ApplicationCommandOptionUser, alice.ID)}, []int64{early, tagged}},
		{"AuthorAndSince", []*discordgo.ApplicationCommandInteractionDataOption{
			opt("author", discordgo.ApplicationCommandOptionUser, alice.ID), str("since", "2026-04-05")}, []int64{tagged}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := slices.Clone(c.want)
			slices.Sort(want)
			if got, text := search(c.opts...); !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v: %s", got, want, text)
			}
		})
	}
	t.Run("Explain", func(t *testing.T) {
		_, text := search(opt("explain", discordgo.ApplicationCommandOptionBoolean, true))
		if n := strings.Count(text, "-# ↳ keyword "); n != 3 {
			t.Fatalf("explain: %d explanation lines, want one per result: %s", n, text)
		}
		if _, plain := search(); strings.Contains(plain, "↳") {
			t.Errorf("a search without explain explains: %s", plain)
		}
	})
	t.Run("MinScoreOneKeepsNothing", func(t *testing.T) {
		ids, text := search(opt("min_score", discordgo.ApplicationCommandOptionNumber, 1.0))
		if len(ids) != 0 || !strings.Contains(text, "with these filters") {
			t.Fatalf("min_score 1: ids %v, answer %q; want nothing, saying the filters left nothing", ids, text)
		}
	})
	bad := []struct {
		name     string
		opts     []*discordgo.ApplicationCommandInteractionDataOption
		mentions string
	}{
		{"SinceNotADate", []*discordgo.ApplicationCommandInteractionDataOption{str("since", "yesterday-ish")}, "since"},
		{"SinceAfterUntil", []*discordgo.ApplicationCommandInteractionDataOption{str("since", "2026-04-20"), str("until", "2026-04-10")}, "is after until"},
		{"UnknownType", []*discordgo.ApplicationCommandInteractionDataOption{str("type", "gossip")}, "Unknown memory type"},
		{"MinScoreAboveOne", []*discordgo.ApplicationCommandInteractionDataOption{opt("min_score", discordgo.ApplicationCommandOptionNumber, 3.0)}, "min_score"},
	}
	for _, c := range bad {
		t.Run("Err"+c.name, func(t *testing.T) {
			ids, text := search(c.opts...)
			if len(ids) != 0 || !strings.Contains(text, c.mentions) {
				t.Fatalf("answer %q (ids %v), want a refusal mentioning %q", text, ids, c.mentions)
			}
		})
	}
}

// The search subcommand offers every filter, within Discord's limits.
func TestMemorySearchOptions(t *testing.T) {
	var search *discordgo.ApplicationCommandOption
	for _, c := range bot.Commands() {
		for _, o := range c.Options {
			if c.Name == "memory" && o.Name == "search" {
				search = o
			}
		}
	}
	if search == nil {
		t.Fatal("/memory search missing")
	}
	got := map[string]discordgo.ApplicationCommandOptionType{}
	for _, o := range search.Options {
		got[o.Name] = o.Type
	}
	want := map[string]discordgo.ApplicationCommandOptionType{
		"query": discordgo.ApplicationCommandOptionString, "scope": discordgo.ApplicationCommandOptionString,
		"type": discordgo.ApplicationCommandOptionString, "tag": discordgo.ApplicationCommandOptionString,
		"since": discordgo.ApplicationCommandOptionString, "until": discordgo.ApplicationCommandOptionString,
		"pinned": discordgo.ApplicationCommandOptionBoolean, "author": discordgo.ApplicationCommandOptionUser,
		"min_score": discordgo.ApplicationCommandOptionNumber, "explain": discordgo.ApplicationCommandOptionBoolean,
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("option %s: type %v, want %v", name, got[name], typ)
		}
	}
	if len(search.Options) > 25 {
		t.Errorf("%d options, Discord allows 25", len(search.Options))
	}
}
