package tools_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// search_memories narrows its search with the filters it is given, and refuses a bad
// value with an error the model can act on, naming the field.
func TestSearchFilters(t *testing.T) {
	f := newFixture(t)
	day := func(d int) time.Time { return time.Date(2026, 4, d, 12, 0, 0, 0, time.UTC) }
	f.store.Now = testkit.NewClock(day(30)).Now
	mk := func(m memory.Memory) int64 {
		m.Scope, m.GuildID = memory.ScopeServer, "g1"
		return testkit.MustRemember(t, f.store, m).ID
	}
	early := mk(memory.Memory{Content: "kayak trip planned early", CreatedAt: day(1), Provenance: memory.Provenance{AuthorID: "111"}})
	decided := mk(memory.Memory{Content: "kayak trip decided for the lake", Type: memory.TypeDecision, CreatedAt: day(10),
		Provenance: memory.Provenance{AuthorID: "222"}})
	tagged := mk(memory.Memory{Content: "kayak trip gear list", Tags: []string{"gear"}, Pinned: true, CreatedAt: day(28),
		Provenance: memory.Provenance{AuthorID: "111"}})
	conv := func() tools.Conversation {
		c := guildConv()
		c.Now = day(30)
		return c
	}

	cases := []struct {
		name string
		args string
		want []int64
	}{
		{"NoFilter", `{"query":"kayak"}`, []int64{early, decided, tagged}},
		{"Type", `{"query":"kayak","type":"decision"}`, []int64{decided}},
		{"Tags", `{"query":"kayak","tags":["GEAR"]}`, []int64{tagged}},
		{"SinceDate", `{"query":"kayak","since":"2026-04-05"}`, []int64{decided, tagged}},
		{"UntilDateIsTheWholeDay", `{"query":"kayak","until":"2026-04-10"}`, []int64{early, decided}},
		{"SinceAge", `{"query":"kayak","since":"7d"}`, []int64{tagged}},
		{"Pinned", `{"query":"kayak","pinned":true}`, []int64{tagged}},
		{"Author", `{"query":"kayak","author":"111"}`, []int64{early, tagged}},
		{"AuthorMention", `{"query":"kayak","author":"<@222>"}`, []int64{decided}},
		{"MinScoreOne", `{"query":"kayak","min_score":1}`, nil},
		{"NullsAndEmptiesIgnored", `{"query":"kayak","type":"","since":null,"author":""}`, []int64{early, decided, tagged}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCall(t, f.box(conv()), tools.NameSearch, c.args)
			var got []int64
			for _, h := range r.Results {
				got = append(got, h.ID)
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
		})
	}

	bad := []struct {
		name, args, mentions string
	}{
		{"UnknownType", `{"query":"kayak","type":"gossip"}`, "type must be one of"},
		{"SinceAfterUntil", `{"query":"kayak","since":"2026-04-20","until":"2026-04-10"}`, "is after until"},
		{"SinceNotADate", `{"query":"kayak","since":"last tuesday"}`, "since"},
		{"UntilNotADate", `{"query":"kayak","until":"soon"}`, "until"},
		{"MinScoreAboveOne", `{"query":"kayak","min_score":2}`, "min_score must be between 0 and 1"},
		{"MinScoreNegative", `{"query":"kayak","min_score":-0.5}`, "min_score"},
		{"MinScoreNotANumber", `{"query":"kayak","min_score":"high"}`, "min_score must be a number"},
		{"AuthorName", `{"query":"kayak","author":"Aiko"}`, "author must be a user id"},
		{"TagsNotAList", `{"query":"kayak","tags":"gear"}`, "tags"},
	}
	for _, c := range bad {
		t.Run("Err"+c.name, func(t *testing.T) {
			wantRefused(t, f.box(conv()), tools.NameSearch, c.args, memory.EINVALID, c.mentions)
		})
	}
}

// The type enum offered to the model is exactly the memory types.
func TestSearchSchemaTypes(t *testing.T) {
	tb := newFixture(t).box(guildConv())
	for _, d := range tb.Definitions() {
		if d.Function.Name != tools.NameSearch {
			continue
		}
		raw, err := json.Marshal(d.Function.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, ty := range memory.Types {
			want = append(want, string(ty))
		}
		if got := schema.Properties["type"].Enum; !slices.Equal(got, want) {
			t.Fatalf("type enum %v, want the memory types %v", got, want)
		}
		for _, p := range []string{"tags", "since", "until", "pinned", "author", "min_score"} {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("search_memories schema lacks %s", p)
			}
		}
		return
	}
	t.Fatal("search_memories not offered")
}
