package bot_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
)

// reviewSeed is what waits in a server's queue: two disputed pairs and two changes the
// pipeline proposed but could not make.
type reviewSeed struct {
	mika, ren, sat, sun, treasurer, wiki *memory.Memory
}

func seedReview(t *testing.T, tb *testBot, guild, channel string) reviewSeed {
	t.Helper()
	ctx := context.Background()
	owner := memory.ServerOwner(guild)
	say := func(content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	var s reviewSeed
	s.mika, s.ren = say("The raid leader is Mika"), say("The raid leader is Ren")
	s.sat, s.sun = say("The meetup is on Saturday"), say("The meetup is on Sunday")
	s.treasurer, s.wiki = say("The treasurer is Kenji"), say("The wiki lives on the old server")
	for _, pair := range [][2]int64{{s.mika.ID, s.ren.ID}, {s.sat.ID, s.sun.ID}} {
		if _, err := tb.store.Review.Dispute(ctx, owner, pair[0], pair[1], memory.ActorPipeline, "two answers"); err != nil {
			t.Fatal(err)
		}
	}
	// Without the right to edit server memory, the pipeline's changes wait for a person.
	out, err := tb.store.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: guild, ChannelID: channel, Proposals: []memory.Proposal{
		{Action: memory.ProposeUpdate, Owner: owner, TargetID: s.treasurer.ID, Memory: memory.Memory{Content: "The treasurer is Aiko"},
			Reason: "Aiko took over in March"},
		{Action: memory.ProposeUpdate, Owner: owner, TargetID: s.wiki.ID, Memory: memory.Memory{Content: "The wiki moved to the new server"},
			Reason: "moved"},
	}})
	if err != nil || out[0].Action != memory.ActionReview || out[1].Action != memory.ActionReview {
		t.Fatalf("proposals: %+v %v", out, err)
	}
	return s
}

// reviewButtons are the custom IDs of a review message's buttons by their label.
func reviewButtonIDs(m *fakediscord.SentMessage) map[string]string {
	out := map[string]string{}
	for _, b := range buttonsOf(m) {
		out[b.Label] = b.CustomID
	}
	return out
}

// TestReviewQueue: /memory review shows what waits one item a page, with Keep, Replace, Merge
// and Forget; each press settles its item through the store for the member pressing, shows
// what it did and the next item, and a settled item answers "not waiting any more".
func TestReviewQueue(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	server := memory.ServerOwner(uxGuild)
	s := seedReview(t, tb, uxGuild, uxChannel)
	ctx := context.Background()

	msg, ephemeral := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("review")))
	if !ephemeral || len(msg.Embeds) != 1 {
		t.Fatalf("/memory review answered %+v (ephemeral %v)", msg, ephemeral)
	}
	e := msg.Embeds[0]
	if e.Title != "Waiting for review · this server's memory" || !strings.HasPrefix(e.Footer.Text, "Item 1 of 4 · ") {
		t.Errorf("title %q, footer %q", e.Title, e.Footer.Text)
	}
	// The newest first; the four were written in the same moment, so any may lead.
	if !strings.HasPrefix(e.Description, "**Proposed change**") && !strings.HasPrefix(e.Description, "**Disputed**") {
		t.Errorf("first item = %q", e.Description)
	}
	buttons := reviewButtonIDs(msg)
	if len(buttons) != 6 || !regexp.MustCompile(`^kioku:rvact:k:s:0:[dh][0-9]+$`).MatchString(buttons["Keep"]) ||
		buttons["Next ▶"] != "kioku:rvpage:n:s:1" || buttons["◀ Previous"] != "kioku:rvpage:p:s:0" {
		t.Fatalf("buttons = %v", buttons)
	}

	t.Run("InJapanese", func(t *testing.T) {
		i := tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("review"))
		i.Locale = discordgo.Japanese
		msg, _ := tb.interact(t, i)
		if e := msg.Embeds[0]; !strings.HasPrefix(e.Title, "見直し待ち · ") || !strings.HasPrefix(e.Footer.Text, "4件中 1件目 · ") ||
			reviewButtonIDs(msg)["残す"] == "" {
			t.Errorf("Japanese review: title %q, footer %q, buttons %v", e.Title, e.Footer.Text, reviewButtonIDs(msg))
		}
	})
	t.Run("PlainMemberIsRefused", func(t *testing.T) {
		msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, bob, permPlain, memorySub("review")))
		if !strings.HasPrefix(msg.Content, "Reviewing this server's memory needs the Manage Server permission") || len(msg.Embeds) != 0 {
			t.Errorf("plain member's /memory review answered %q with %d embeds", msg.Content, len(msg.Embeds))
		}
		for _, id := range []string{buttons["Keep"], buttons["Forget"], buttons["Next ▶"]} {
			msg, _ := tb.press(t, uxGuild, bob, permPlain, id)
			if !strings.HasPrefix(msg.Content, "Reviewing this server's memory needs") {
				t.Errorf("plain member's %s answered %q", id, msg.Content)
			}
		}
		if m := tb.current(t, server, s.wiki.ID); m.Content != "The wiki lives on the old server" {
			t.Errorf("a refused press changed #%d: %q", s.wiki.ID, m.Content)
		}
	})

	// Each kind of item once, found by what it shows.
	page := func(n int) *fakediscord.SentMessage {
		t.Helper()
		msg, _ := tb.press(t, uxGuild, alice, permEditor, fmt.Sprintf("kioku:rvpage:n:s:%d", n))
		if len(msg.Embeds) != 1 {
			t.Fatalf("page %d answered %q", n, msg.Content)
		}
		return msg
	}
	find := func(what string) map[string]string {
		t.Helper()
		for n := range 4 {
			if msg := page(n); strings.Contains(msg.Embeds[0].Description, what) {
				return reviewButtonIDs(msg)
			}
		}
		t.Fatalf("no item shows %q", what)
		return nil
	}

	t.Run("ReplaceAppliesAProposal", func(t *testing.T) {
		b := find("The treasurer is Aiko")
		msg, _ := tb.press(t, uxGuild, alice, permEditor, b["Replace"])
		if !strings.HasPrefix(msg.Content, "Replace: done.\n✏️ #") || !strings.Contains(msg.Content, "The treasurer is Aiko") {
			t.Errorf("replace answered %q", msg.Content)
		}
		if len(msg.Embeds) != 1 || !strings.HasPrefix(msg.Embeds[0].Footer.Text, "Item ") {
			t.Errorf("replace did not show the next item: %+v", msg.Embeds)
		}
		if m := tb.current(t, server, s.treasurer.ID); m.Content != "The treasurer is Aiko" {
			t.Errorf("after replace #%d says %q", s.treasurer.ID, m.Content)
		}
		// The same button again: the item is settled.
		msg, _ = tb.press(t, uxGuild, alice, permEditor, b["Replace"])
		if !strings.HasPrefix(msg.Content, "That item is not waiting for review any more") {
			t.Errorf("second press answered %q", msg.Content)
		}
	})
	t.Run("KeepEndsADispute", func(t *testing.T) {
		b := find("The raid leader is Ren")
		msg, _ := tb.press(t, uxGuild, alice, permEditor, b["Keep"])
		if !strings.HasPrefix(msg.Content, "Keep: done.") {
			t.Errorf("keep answered %q", msg.Content)
		}
		for _, id := range []int64{s.mika.ID, s.ren.ID} {
			if m := tb.current(t, server, id); m.State != memory.StateActive {
				t.Errorf("#%d is %q after keep", id, m.State)
			}
		}
	})
	t.Run("MergeThroughTheForm", func(t *testing.T) {
		b := find("The meetup is on Sunday")
		i := tb.fake.ComponentClick(uxGuild, uxChannel, alice, permEditor, b["Merge"], nil)
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		r := tb.responseOf(t, i)
		want := strings.Replace(b["Merge"], "kioku:rvact:m:", "kioku:rvmerge:", 1)
		if r.Type != discordgo.InteractionResponseModal || r.CustomID != want || r.Title != fmt.Sprintf("Merge into #%d", s.sat.ID) {
			t.Fatalf("merge opened %d %q %q, want the form %q", r.Type, r.CustomID, r.Title, want)
		}
		ti := r.Data.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput)
		if ti.Value != "The meetup is on Saturday" {
			t.Errorf("the form is prefilled with %q, want the older memory's text", ti.Value)
		}
		submit := tb.fake.ModalSubmit(uxGuild, uxChannel, alice, permEditor, r.CustomID,
			map[string]string{"content": "The meetup is on Saturday, or Sunday when it rains"}, i.Message)
		msg, _ := tb.interact(t, submit)
		// The answer takes the place of the queue's message, as the buttons' answers do.
		if r := tb.responseOf(t, submit); r.Type != discordgo.InteractionResponseDeferredMessageUpdate {
			t.Errorf("the merge form answered with a response of type %d, want an update of its message", r.Type)
		}
		if !strings.HasPrefix(msg.Content, "Merge: done.") || !strings.Contains(msg.Content, fmt.Sprintf("🗑️ Forgot #%d", s.sun.ID)) {
			t.Errorf("merge answered %q", msg.Content)
		}
		if m := tb.current(t, server, s.sat.ID); m.Content != "The meetup is on Saturday, or Sunday when it rains" || m.State != memory.StateActive {
			t.Errorf("after merge #%d is %q (%s)", s.sat.ID, m.Content, m.State)
		}
		if m := tb.current(t, server, s.sun.ID); !m.Deleted() {
			t.Errorf("after merge #%d is still live", s.sun.ID)
		}
		// The history names who merged.
		hist, err := tb.store.Memories.History(ctx, server, s.sat.ID)
		if err != nil || hist[len(hist)-1].Actor != memory.UserActor(alice.ID) {
			t.Errorf("merge recorded as %+v (%v)", hist[len(hist)-1], err)
		}
	})
	t.Run("ForgetForgetsAProposalsTarget", func(t *testing.T) {
		b := find("The wiki moved to the new server")
		msg, _ := tb.press(t, uxGuild, alice, permEditor, b["Forget"])
		if !strings.Contains(msg.Content, fmt.Sprintf("🗑️ Forgot #%d (it can be recovered for", s.wiki.ID)) {
			t.Errorf("forget answered %q", msg.Content)
		}
		// Nothing waits any more, and the last answer offers its Undo.
		if !strings.Contains(msg.Content, "Nothing waits for review in this server's memory.") || len(msg.Embeds) != 0 {
			t.Errorf("the empty queue reads %q with %d embeds", msg.Content, len(msg.Embeds))
		}
		if ids := customIDs(msg); len(ids) != 1 || ids[0][0] != fmt.Sprintf("kioku:undo:s:%d:2", s.wiki.ID) {
			t.Errorf("buttons after forget: %v", ids)
		}
		if m := tb.current(t, server, s.wiki.ID); !m.Deleted() {
			t.Error("the proposal's target is still live")
		}
	})
	t.Run("BrokenButtons", func(t *testing.T) {
		for _, id := range []string{"kioku:rvact:x:s:0:d1", "kioku:rvact:k:s:0:x1", "kioku:rvact:k:s:01:d1", "kioku:rvpage:n:q:0"} {
			msg, _ := tb.press(t, uxGuild, alice, permEditor, id)
			if !strings.Contains(msg.Content, "not one I recognise") {
				t.Errorf("%q answered %q", id, msg.Content)
			}
		}
	})
}

// TestReviewPersonalIsTheMembersOwn: a member's personal queue is theirs alone: pressing
// another member's personal review button (or a forged one) acts on the presser's own queue,
// where the item does not wait, and the owner's memories stay as they were.
func TestReviewPersonalIsTheMembersOwn(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	aliceMe := memory.PersonalOwner(alice.ID)
	a := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: "I work on Mondays"})
	b := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: "I never work on Mondays"})
	if _, err := tb.store.Review.Dispute(context.Background(), aliceMe, a.ID, b.ID, memory.ActorPipeline, "which"); err != nil {
		t.Fatal(err)
	}
	msg, _ := tb.interact(t, tb.fake.SlashCommand("", "dm-alice", alice, 0, memorySub("review")))
	if len(msg.Embeds) != 1 || !strings.Contains(msg.Embeds[0].Description, "I never work on Mondays") {
		t.Fatalf("alice's review in her DM = %+v", msg)
	}
	forget := reviewButtonIDs(msg)["Forget"]
	if !strings.HasPrefix(forget, "kioku:rvact:f:p:0:d") {
		t.Fatalf("forget button %q", forget)
	}
	for _, guild := range []string{"", uxGuild} {
		msg, _ := tb.interact(t, tb.fake.ComponentClick(guild, uxChannel, bob, permEditor, forget, nil))
		if !strings.HasPrefix(msg.Content, "That item is not waiting for review any more") ||
			!strings.Contains(msg.Content, "Nothing waits for review in your personal memory.") || len(msg.Embeds) != 0 {
			t.Errorf("bob's press of alice's button answered %q with %d embeds", msg.Content, len(msg.Embeds))
		}
	}
	for _, id := range []int64{a.ID, b.ID} {
		if m := tb.current(t, aliceMe, id); m.Deleted() || m.State != memory.StateDisputed {
			t.Errorf("alice's #%d after bob's press: deleted %v, %s", id, m.Deleted(), m.State)
		}
	}
	// At the full privacy level she may forget, but not write words in.
	if err := tb.store.Settings.SetPrivacy(context.Background(), alice.ID, memory.PrivacyFull); err != nil {
		t.Fatal(err)
	}
	replace := strings.Replace(forget, ":f:", ":r:", 1)
	if msg, _ := tb.interact(t, tb.fake.ComponentClick("", "dm-alice", alice, 0, replace, nil)); !strings.HasPrefix(msg.Content, "Your privacy level is full") {
		t.Errorf("replace at the full level answered %q", msg.Content)
	}
	// Alice's own press settles it.
	msg, _ = tb.interact(t, tb.fake.ComponentClick("", "dm-alice", alice, 0, forget, nil))
	if !strings.Contains(msg.Content, fmt.Sprintf("🗑️ Forgot #%d", b.ID)) {
		t.Errorf("alice's forget answered %q", msg.Content)
	}
}

// hiddenChannelGuild puts a server in the bot's view with a public #general and a #mods only
// the mods role may read, and returns its ids.
func hiddenChannelGuild(t *testing.T, tb *testBot) (guild, general, mods, modRole string) {
	t.Helper()
	guild, general, mods, modRole = "700", "701", "702", "703"
	g := &discordgo.Guild{ID: guild, Name: "guild", Roles: []*discordgo.Role{
		{ID: guild, Name: "@everyone", Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
		{ID: modRole, Name: "mods", Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
	}, Channels: []*discordgo.Channel{
		{ID: general, GuildID: guild, Name: "general", Type: discordgo.ChannelTypeGuildText},
		{ID: "704", GuildID: guild, Name: "random", Type: discordgo.ChannelTypeGuildText},
		{ID: mods, GuildID: guild, Name: "mods", Type: discordgo.ChannelTypeGuildText, PermissionOverwrites: []*discordgo.PermissionOverwrite{
			{ID: guild, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: modRole, Type: discordgo.PermissionOverwriteTypeRole, Allow: discordgo.PermissionViewChannel},
		}},
	}}
	if err := tb.session.State.GuildAdd(g); err != nil {
		t.Fatal(err)
	}
	return guild, general, mods, modRole
}

// TestReviewHidesWhatTheMemberMayNotSee: an item learned in a channel the member cannot
// read is neither listed, nor counted in /kioku status, nor settled by a forged button; a
// member of that channel sees and counts it.
func TestReviewHidesWhatTheMemberMayNotSee(t *testing.T) {
	tb := newTestBot(t)
	guild, general, mods, modRole := hiddenChannelGuild(t, tb)
	server := memory.ServerOwner(guild)
	in := func(channel, content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	a, b := in(mods, "Ban the spammer on sight"), in(mods, "Warn the spammer first")
	if _, err := tb.store.Review.Dispute(context.Background(), server, a.ID, b.ID, memory.ActorPipeline, "which"); err != nil {
		t.Fatal(err)
	}
	alice, boss := tb.fake.NewUser("alice"), tb.fake.NewUser("boss")
	run := func(user *discordgo.User, roles []string, i *discordgo.Interaction) *fakediscord.SentMessage {
		t.Helper()
		i.Member.Roles = roles
		msg, _ := tb.interact(t, i)
		return msg
	}
	status := func(user *discordgo.User, roles []string) map[string]string {
		t.Helper()
		msg := run(user, roles, tb.fake.SlashCommand(guild, general, user, permEditor, slashData("kioku", "status")))
		fields := map[string]string{}
		for _, f := range msg.Embeds[0].Fields {
			fields[f.Name] = f.Value
		}
		return fields
	}

	// Alice manages the server but cannot read #mods.
	msg := run(alice, []string{}, tb.fake.SlashCommand(guild, general, alice, permEditor, memorySub("review")))
	if msg.Content != "Nothing waits for review in this server's memory." || len(msg.Embeds) != 0 {
		t.Errorf("alice's review shows %q, %+v", msg.Content, msg.Embeds)
	}
	if got, ok := status(alice, []string{})["Waiting for review"]; ok {
		t.Errorf("alice's status counts %q waiting", got)
	}
	forged := fmt.Sprintf("kioku:rvact:f:s:0:d%d", a.ID)
	msg = run(alice, []string{}, tb.fake.ComponentClick(guild, general, alice, permEditor, forged, nil))
	if !strings.HasPrefix(msg.Content, "That item is not waiting for review any more") {
		t.Errorf("alice's forged press answered %q", msg.Content)
	}
	if m := tb.current(t, server, b.ID); m.Deleted() || m.State != memory.StateDisputed {
		t.Errorf("the #mods pair changed: deleted %v, %s", m.Deleted(), m.State)
	}

	// The boss reads #mods: the pair waits for them, and counts.
	msg = run(boss, []string{modRole}, tb.fake.SlashCommand(guild, general, boss, permEditor, memorySub("review")))
	if len(msg.Embeds) != 1 || !strings.Contains(msg.Embeds[0].Description, "Warn the spammer first") {
		t.Errorf("the boss's review = %+v", msg)
	}
	if got := status(boss, []string{modRole})["Waiting for review"]; got != "1: see /memory review" {
		t.Errorf("the boss's status counts %q", got)
	}
	// A pair in #general waits for both; each counts what they may see.
	c, d := in(general, "Game night is on Thursday"), in(general, "Game night is on Friday")
	if _, err := tb.store.Review.Dispute(context.Background(), server, c.ID, d.ID, memory.ActorPipeline, "which"); err != nil {
		t.Fatal(err)
	}
	if got := status(alice, []string{})["Waiting for review"]; got != "1: see /memory review" {
		t.Errorf("alice's status counts %q", got)
	}
	if got := status(boss, []string{modRole})["Waiting for review"]; got != "2: see /memory review" {
		t.Errorf("the boss's status counts %q", got)
	}
}
