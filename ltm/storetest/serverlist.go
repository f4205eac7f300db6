package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// ContributionStore counts a scope's memories by origin channel and by author, for the web
// dashboard's "contributions at a glance".
type ContributionStore interface {
	Contributions(ctx context.Context, owner memory.Owner, aud *memory.Audience) (memory.Contributions, error)
}

// testListChannelAndDates: List narrows a scope by origin channel and by the day a memory
// was saved (Since and Until both inclusive), alone and with the other filters.
func testListChannelAndDates(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	owner := memory.ServerOwner("g1")
	in := func(channel, content string) *memory.Memory {
		m := server("g1", content)
		m.Provenance.ChannelID = channel
		return mustRemember(t, s, m)
	}
	first := in("general", "The raid is on Friday")
	s.Clock.Advance(24 * time.Hour)
	second := in("mods", "Ban the spammer on sight")
	s.Clock.Advance(24 * time.Hour)
	third := in("general", "Board games on Thursday")
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Elsewhere in general",
		Provenance: memory.Provenance{ChannelID: "general"}})

	for _, c := range []struct {
		name string
		opt  memory.ListOptions
		want []int64
	}{
		{"Channel", memory.ListOptions{ChannelID: "general"}, []int64{third.ID, first.ID}},
		{"Since", memory.ListOptions{Since: second.CreatedAt}, []int64{third.ID, second.ID}},
		{"Until", memory.ListOptions{Until: second.CreatedAt}, []int64{second.ID, first.ID}},
		{"SinceUntil", memory.ListOptions{Since: second.CreatedAt, Until: second.CreatedAt}, []int64{second.ID}},
		{"ChannelAndDates", memory.ListOptions{ChannelID: "general", Since: second.CreatedAt}, []int64{third.ID}},
		{"ChannelUnderAudience", memory.ListOptions{ChannelID: "mods",
			Audience: &memory.Audience{Channels: map[string]bool{"general": true}}}, []int64{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := listIDs(t, s, owner, c.opt); !slices.Equal(got, c.want) {
				t.Errorf("List(%+v) = %v, want %v", c.opt, got, c.want)
			}
		})
	}
}

// testContributions: a scope's live memories counted by channel and by author, most first,
// leave out forgotten and shelved memories, other scopes, and every memory of a channel the
// audience does not allow (from both counts).
func testContributions(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Contributions == nil {
		t.Skip("the store has no contribution counts")
	}
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	say := func(channel, author, content string) *memory.Memory {
		m := server("g1", content)
		m.Provenance = memory.Provenance{ChannelID: channel, AuthorID: author, Author: "name-" + author}
		return mustRemember(t, s, m)
	}
	say("general", "u1", "The raid is on Friday")
	say("general", "u1", "Board games on Thursday")
	say("general", "u2", "The wiki moved")
	say("mods", "u2", "Ban the spammer on sight")
	say("mods", "u3", "Mods meet on Sunday")
	gone := say("general", "u3", "An old rule")
	mustForget(t, s, owner, gone.ID)
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Elsewhere",
		Provenance: memory.Provenance{ChannelID: "general", AuthorID: "u1"}})

	count := func(aud *memory.Audience) memory.Contributions {
		t.Helper()
		c, err := s.Contributions.Contributions(ctx, owner, aud)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	all := count(nil)
	wantChannels := []memory.ContributionCount{{ID: "general", Count: 3}, {ID: "mods", Count: 2}}
	wantAuthors := []memory.ContributionCount{{ID: "u1", Name: "name-u1", Count: 2}, {ID: "u2", Name: "name-u2", Count: 2},
		{ID: "u3", Name: "name-u3", Count: 1}}
	if !slices.Equal(all.Channels, wantChannels) || !slices.Equal(all.Authors, wantAuthors) {
		t.Errorf("Contributions = %+v, want channels %+v and authors %+v", all, wantChannels, wantAuthors)
	}
	general := count(&memory.Audience{Channels: map[string]bool{"general": true}})
	wantChannels = []memory.ContributionCount{{ID: "general", Count: 3}}
	wantAuthors = []memory.ContributionCount{{ID: "u1", Name: "name-u1", Count: 2}, {ID: "u2", Name: "name-u2", Count: 1}}
	if !slices.Equal(general.Channels, wantChannels) || !slices.Equal(general.Authors, wantAuthors) {
		t.Errorf("Contributions under #general = %+v, want channels %+v and authors %+v", general, wantChannels, wantAuthors)
	}
}
