package storetest

import (
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testSimilar: Similar finds the live memory a content says again in other words, and
// SimilarAs only among the memories the writer may see there: never another member's
// personal memory (unless the writer authored it), a server memory from a channel the
// writer's place does not allow, another server's memory, or a forgotten one. A near miss
// (another person, number or day, a negation) is no near-duplicate.
func testSimilar(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	const alice, bob, carol = "100", "200", "300"
	g1, g2 := memory.ServerOwner("g1"), memory.ServerOwner("g2")
	aliceOwner := memory.PersonalOwner(alice)
	withProvenance := func(m memory.Memory, author, channel string) memory.Memory {
		m.Provenance = memory.Provenance{AuthorID: author, ChannelID: channel}
		return m
	}
	peanuts := mustRemember(t, s, withProvenance(server("g1", "Kenji is allergic to peanuts"), bob, "general"))
	raid := mustRemember(t, s, withProvenance(server("g1", "The raid starts at 9pm on Friday"), bob, "mods"))
	movie := mustRemember(t, s, withProvenance(server("g2", "Movie night is on Saturday at 8pm"), bob, "lobby"))
	tea := mustRemember(t, s, withProvenance(personal(alice, "", "Alice prefers green tea in the morning"), alice, "dm-alice"))
	violin := mustRemember(t, s, withProvenance(personal(alice, "g1", "Alice plays the violin"), bob, "general"))
	inGeneral := &memory.Audience{Channels: map[string]bool{"general": true}}
	bobInGeneral := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "general", Audience: inGeneral}

	// want checks one call's answer: the memory with id want, or none for 0.
	want := func(t *testing.T, what string, got *memory.Memory, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var id int64
		if got != nil {
			id = got.ID
		}
		if id != want {
			t.Errorf("%s = #%d, want #%d (0: none)", what, id, want)
		}
	}
	t.Run("VisibleParaphraseFound", func(t *testing.T) {
		got, err := s.Duplicates.SimilarAs(ctx, bobInGeneral, g1, "Kenji has a peanut allergy")
		want(t, "Bob in #general", got, err, peanuts.ID)
		got, err = s.Duplicates.Similar(ctx, g1, "Kenji has a peanut allergy")
		want(t, "the whole scope", got, err, peanuts.ID)
	})
	t.Run("NearMissesAreNotSimilar", func(t *testing.T) {
		for _, content := range []string{"Kenji is not allergic to peanuts", "Bob is allergic to peanuts",
			"The raid starts at 9pm on Saturday", "The raid starts at 8pm on Friday"} {
			got, err := s.Duplicates.Similar(ctx, g1, content)
			want(t, content, got, err, 0)
		}
	})
	t.Run("HiddenChannelIsNeverReturned", func(t *testing.T) {
		got, err := s.Duplicates.SimilarAs(ctx, bobInGeneral, g1, "Friday's raid begins at 9pm")
		want(t, "Bob in #general, the memory in #mods", got, err, 0)
		inMods := memory.WriteContext{WriterID: bob, GuildID: "g1", ChannelID: "mods",
			Audience: &memory.Audience{Channels: map[string]bool{"general": true, "mods": true}}}
		got, err = s.Duplicates.SimilarAs(ctx, inMods, g1, "Friday's raid begins at 9pm")
		want(t, "Bob in #mods", got, err, raid.ID)
	})
	t.Run("OtherServerIsNeverReturned", func(t *testing.T) {
		got, err := s.Duplicates.SimilarAs(ctx, bobInGeneral, g1, "Movie night: Saturday, 8pm")
		want(t, "g1's scope", got, err, 0)
		got, err = s.Duplicates.SimilarAs(ctx, bobInGeneral, g2, "Movie night: Saturday, 8pm")
		want(t, "g2's scope from a place in g1", got, err, 0)
		inLobby := memory.WriteContext{WriterID: carol, GuildID: "g2", ChannelID: "lobby"}
		got, err = s.Duplicates.SimilarAs(ctx, inLobby, g2, "Movie night: Saturday, 8pm")
		want(t, "a writer in g2", got, err, movie.ID)
	})
	t.Run("OtherMembersPersonalIsNeverReturned", func(t *testing.T) {
		const paraphrase = "Alice really prefers green tea in the morning"
		got, err := s.Duplicates.SimilarAs(ctx, bobInGeneral, aliceOwner, paraphrase)
		want(t, "Bob about Alice", got, err, 0)
		aliceInDM := memory.WriteContext{WriterID: alice, ChannelID: "dm-alice"}
		got, err = s.Duplicates.SimilarAs(ctx, aliceInDM, aliceOwner, paraphrase)
		want(t, "Alice in her DM", got, err, tea.ID)
		aliceInGuild := memory.WriteContext{WriterID: alice, GuildID: "g1", ChannelID: "general", Audience: inGeneral}
		got, err = s.Duplicates.SimilarAs(ctx, aliceInGuild, aliceOwner, paraphrase)
		want(t, "Alice in g1, her DM memory without cross-server use", got, err, 0)
		if err := s.Settings.SetCrossServer(ctx, alice, true); err != nil {
			t.Fatal(err)
		}
		got, err = s.Duplicates.SimilarAs(ctx, aliceInGuild, aliceOwner, paraphrase)
		want(t, "Alice in g1 with cross-server use", got, err, tea.ID)
	})
	t.Run("WhatTheWriterAuthoredIsReturned", func(t *testing.T) {
		got, err := s.Duplicates.SimilarAs(ctx, bobInGeneral, aliceOwner, "Alice plays violin")
		want(t, "Bob, who saved it", got, err, violin.ID)
		carolInGeneral := memory.WriteContext{WriterID: carol, GuildID: "g1", ChannelID: "general", Audience: inGeneral}
		got, err = s.Duplicates.SimilarAs(ctx, carolInGeneral, aliceOwner, "Alice plays violin")
		want(t, "Carol, who did not", got, err, 0)
	})
	t.Run("ForgottenIsNeverReturned", func(t *testing.T) {
		mustForget(t, s, g1, peanuts.ID)
		got, err := s.Duplicates.Similar(ctx, g1, "Kenji has a peanut allergy")
		want(t, "after forgetting it", got, err, 0)
	})
	t.Run("BadContentIsRefused", func(t *testing.T) {
		_, err := s.Duplicates.Similar(ctx, g1, "   ")
		wantCode(t, err, memory.EINVALID)
		_, err = s.Duplicates.SimilarAs(ctx, bobInGeneral, g1, "the bot token is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")
		if err == nil {
			t.Error("a secret was searched for, want it refused as a write refuses it")
		}
	})
}
