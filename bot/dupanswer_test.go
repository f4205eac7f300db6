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

// dupButton is the shape of the near-duplicate answer's buttons.
var dupButton = regexp.MustCompile(`^kioku:dup:([krmc]):([sp]):[0-9a-f]{32}:([0-9]+)$`)

// similarAnswer checks that msg is the near-duplicate answer naming #near and returns its
// buttons by action letter.
func similarAnswer(t *testing.T, msg *fakediscord.SentMessage, near int64) map[string]string {
	t.Helper()
	if !strings.HasPrefix(msg.Content, fmt.Sprintf("🔁 This is similar to #%d, which you can see here:", near)) {
		t.Fatalf("answer = %q, want the near-duplicate answer naming #%d", msg.Content, near)
	}
	out := map[string]string{}
	for _, b := range buttonsOf(msg) {
		p := dupButton.FindStringSubmatch(b.CustomID)
		if p == nil || p[3] != fmt.Sprint(near) {
			t.Fatalf("button %q", b.CustomID)
		}
		out[p[1]] = b.CustomID
	}
	if len(out) != 4 {
		t.Fatalf("buttons = %v, want keep, replace, merge and cancel", out)
	}
	return out
}

func countLive(t *testing.T, tb *testBot, owner memory.Owner) int {
	t.Helper()
	_, n, err := tb.store.Memories.List(context.Background(), owner, memory.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAddNearDuplicate: /memory add of what a memory the member can see here already says in
// other words saves nothing and answers "similar to #N"; Keep both saves it, Replace saves it
// and marks #N superseded by it, Merge writes the text confirmed in a form into #N, Cancel
// drops it; the same content word for word is "already remembered", and a held save is
// found only by the member who made it, once.
func TestAddNearDuplicate(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	server := memory.ServerOwner(uxGuild)
	add := func(user *discordgo.User, content string) *fakediscord.SentMessage {
		t.Helper()
		msg, ephemeral := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, user, permEditor, memorySub("add", strOpt("content", content))))
		if !ephemeral {
			t.Errorf("the answer to %q is not ephemeral", content)
		}
		return msg
	}
	say := func(content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: content})
	}

	t.Run("KeepBoth", func(t *testing.T) {
		peanuts := say("Kenji is allergic to peanuts")
		before := countLive(t, tb, server)
		msg := add(alice, "Kenji has a peanut allergy")
		b := similarAnswer(t, msg, peanuts.ID)
		if !strings.Contains(msg.Content, "> Kenji is allergic to peanuts\nYours:\n> Kenji has a peanut allergy\nNothing is saved yet.") ||
			!strings.HasSuffix(msg.Content, "The choice stays open for 10 minutes.") {
			t.Errorf("answer = %q", msg.Content)
		}
		if n := countLive(t, tb, server); n != before {
			t.Fatalf("the answer saved %d memories", n-before)
		}
		// Word for word, the write answers itself.
		if msg := add(alice, "Kenji is allergic to peanuts"); msg.Content != fmt.Sprintf("I already remember that as #%d: Kenji is allergic to peanuts", peanuts.ID) {
			t.Errorf("the same words answered %q", msg.Content)
		}
		// Another editor pressing it finds nothing of alice's.
		if msg, _ := tb.press(t, uxGuild, bob, permEditor, b["k"]); !strings.HasPrefix(msg.Content, "That save is not waiting any more") {
			t.Errorf("bob's press answered %q", msg.Content)
		}
		msg, _ = tb.press(t, uxGuild, alice, permEditor, b["k"])
		mems, _, _ := tb.store.Memories.List(context.Background(), server, memory.ListOptions{Limit: 1})
		if msg.Content != fmt.Sprintf("📌 Remembered (server) #%d: Kenji has a peanut allergy", mems[0].ID) || countLive(t, tb, server) != before+1 {
			t.Errorf("keep both answered %q", msg.Content)
		}
		if got := fmt.Sprint(customIDs(msg)); got != fmt.Sprintf("[[kioku:undo:s:%d:1 kioku:edit:s:%d:1]]", mems[0].ID, mems[0].ID) {
			t.Errorf("keep both buttons %s", got)
		}
		if mems[0].Provenance.AuthorID != alice.ID || mems[0].Provenance.ChannelID != uxChannel {
			t.Errorf("the kept save lost where it came from: %+v", mems[0].Provenance)
		}
		if msg, _ := tb.press(t, uxGuild, alice, permEditor, b["k"]); !strings.HasPrefix(msg.Content, "That save is not waiting any more") {
			t.Errorf("a second press answered %q", msg.Content)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		raid := say("The raid starts at 9pm on Friday")
		b := similarAnswer(t, add(alice, "Friday's raid begins at 9pm"), raid.ID)
		msg, _ := tb.press(t, uxGuild, alice, permEditor, b["r"])
		mems, _, _ := tb.store.Memories.List(context.Background(), server, memory.ListOptions{Limit: 1})
		want := fmt.Sprintf("📌 Remembered (server) #%d: Friday's raid begins at 9pm\n🔁 #%d is marked superseded by #%d.", mems[0].ID, raid.ID, mems[0].ID)
		if msg.Content != want {
			t.Errorf("replace answered %q, want %q", msg.Content, want)
		}
		if m := tb.current(t, server, raid.ID); m.State != memory.StateSuperseded || m.StateRef != mems[0].ID {
			t.Errorf("after replace #%d is %q by #%d", raid.ID, m.State, m.StateRef)
		}
	})
	t.Run("Merge", func(t *testing.T) {
		movie := say("Movie night is on Saturday at 8pm")
		before := countLive(t, tb, server)
		b := similarAnswer(t, add(alice, "Movie night: Saturday, 8pm"), movie.ID)
		i := tb.fake.ComponentClick(uxGuild, uxChannel, alice, permEditor, b["m"], nil)
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		r := tb.responseOf(t, i)
		if r.Type != discordgo.InteractionResponseModal || !strings.HasPrefix(r.CustomID, "kioku:dupm:s:") ||
			!strings.HasSuffix(r.CustomID, fmt.Sprintf(":%d:1", movie.ID)) {
			t.Fatalf("merge opened %d %q", r.Type, r.CustomID)
		}
		if ti := r.Data.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput); ti.Value != movie.Content {
			t.Errorf("the form is prefilled with %q", ti.Value)
		}
		// Bob cannot use alice's form.
		msg, _ := tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, bob, permEditor, r.CustomID, map[string]string{"content": "pwned"}, i.Message))
		if !strings.HasPrefix(msg.Content, "That save is not waiting any more") {
			t.Errorf("bob's submit answered %q", msg.Content)
		}
		msg, _ = tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, alice, permEditor, r.CustomID,
			map[string]string{"content": "Movie night is on Saturday at 8pm; bring snacks"}, i.Message))
		if msg.Content != fmt.Sprintf("🔀 Merged into #%d, now version 2: Movie night is on Saturday at 8pm; bring snacks", movie.ID) {
			t.Errorf("merge answered %q", msg.Content)
		}
		if m := tb.current(t, server, movie.ID); m.Content != "Movie night is on Saturday at 8pm; bring snacks" || countLive(t, tb, server) != before {
			t.Errorf("after merge #%d says %q, %d new memories", movie.ID, m.Content, countLive(t, tb, server)-before)
		}
		if msg, _ := tb.press(t, uxGuild, alice, permEditor, b["k"]); !strings.HasPrefix(msg.Content, "That save is not waiting any more") {
			t.Errorf("keep both after the merge answered %q", msg.Content)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		violin := say("Alice plays the violin")
		before := countLive(t, tb, server)
		b := similarAnswer(t, add(alice, "Alice plays violin"), violin.ID)
		if msg, _ := tb.press(t, uxGuild, alice, permEditor, b["c"]); msg.Content != "Nothing was saved." || len(customIDs(msg)) != 0 {
			t.Errorf("cancel answered %q with %v", msg.Content, customIDs(msg))
		}
		if msg, _ := tb.press(t, uxGuild, alice, permEditor, b["k"]); !strings.HasPrefix(msg.Content, "That save is not waiting any more") ||
			countLive(t, tb, server) != before {
			t.Errorf("keep both after cancel answered %q", msg.Content)
		}
	})
	t.Run("LostRightsAreCheckedAtThePress", func(t *testing.T) {
		tea := say("Kenji prefers green tea in the morning")
		b := similarAnswer(t, add(alice, "Kenji really prefers green tea in the morning"), tea.ID)
		if msg, _ := tb.press(t, uxGuild, alice, permPlain, b["k"]); !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("a press without the right answered %q", msg.Content)
		}
	})
}

// TestAddNearDuplicateVisibility: the answer never depends on a memory the member may not
// see (one learned in #mods reads as nothing for a member outside it, who saves as usual),
// and Replace of a memory learned in another channel writes the new words into it, since a
// new memory here could not name it.
func TestAddNearDuplicateVisibility(t *testing.T) {
	tb := newTestBot(t)
	guild, general, mods, _ := hiddenChannelGuild(t, tb)
	server := memory.ServerOwner(guild)
	alice := tb.fake.NewUser("alice")
	add := func(content string) *fakediscord.SentMessage {
		t.Helper()
		i := tb.fake.SlashCommand(guild, general, alice, permEditor, memorySub("add", strOpt("content", content)))
		i.Member.Roles = []string{}
		msg, _ := tb.interact(t, i)
		return msg
	}
	in := func(channel, content string) *memory.Memory {
		return testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	in(mods, "Kenji is allergic to peanuts")
	if msg := add("Kenji has a peanut allergy"); !strings.HasPrefix(msg.Content, "📌 Remembered (server) #") {
		t.Errorf("a save repeating a #mods memory answered %q", msg.Content)
	}

	raid := in("704", "The raid starts at 9pm on Friday")
	before := countLive(t, tb, server)
	b := similarAnswer(t, add("Friday's raid begins at 9pm"), raid.ID)
	i := tb.fake.ComponentClick(guild, general, alice, permEditor, b["r"], nil)
	i.Member.Roles = []string{}
	msg, _ := tb.interact(t, i)
	want := fmt.Sprintf("✏️ #%d now says your words (version 2): Friday's raid begins at 9pm", raid.ID)
	if !strings.HasPrefix(msg.Content, want) {
		t.Errorf("replace across channels answered %q, want %q…", msg.Content, want)
	}
	if m := tb.current(t, server, raid.ID); m.Content != "Friday's raid begins at 9pm" || m.State != memory.StateActive || countLive(t, tb, server) != before {
		t.Errorf("after replace #%d says %q (%s), %d new memories", raid.ID, m.Content, m.State, countLive(t, tb, server)-before)
	}
}

// TestRememberThisNearDuplicate: Remember this on a message that a memory already says in
// other words gets the same answer; Keep both saves the copy with its author as subject and
// the message as evidence, unless the author asked meanwhile not to be kept.
func TestRememberThisNearDuplicate(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	server := memory.ServerOwner(uxGuild)
	peanuts := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Kenji is allergic to peanuts"})
	remember := func(content string) map[string]string {
		t.Helper()
		target := tb.fake.GuildMessage(uxGuild, uxChannel, bob, content)
		msg, _ := tb.interact(t, tb.fake.MessageCommand(uxGuild, uxChannel, alice, permEditor, "Remember this", target))
		return similarAnswer(t, msg, peanuts.ID)
	}

	b := remember("Kenji has a peanut allergy")
	if n := countLive(t, tb, server); n != 1 {
		t.Fatalf("the answer saved %d memories", n-1)
	}
	msg, _ := tb.press(t, uxGuild, alice, permEditor, b["k"])
	mems, _, _ := tb.store.Memories.List(context.Background(), server, memory.ListOptions{Limit: 1})
	if msg.Content != fmt.Sprintf("📌 Remembered (server) #%d: Kenji has a peanut allergy", mems[0].ID) {
		t.Fatalf("keep both answered %q", msg.Content)
	}
	if got := mems[0]; got.SubjectID != bob.ID || got.Provenance.AuthorID != bob.ID {
		t.Errorf("the copy's subject %q, author %q, want bob", got.SubjectID, got.Provenance.AuthorID)
	}
	if ev, err := tb.store.Memories.Evidence(context.Background(), mems[0].ID); err != nil || len(ev) != 1 || ev[0].AuthorID != bob.ID {
		t.Errorf("the copy's evidence %+v (%v)", ev, err)
	}

	// Bob asks not to be kept before alice chooses: his words are not saved.
	b = remember("Kenji really has a peanut allergy")
	if err := tb.store.Settings.SetPrivacy(context.Background(), bob.ID, memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	msg, _ = tb.press(t, uxGuild, alice, permEditor, b["k"])
	if !strings.Contains(msg.Content, "asked") || countLive(t, tb, server) != 2 {
		t.Errorf("keep both of a now private author's words answered %q", msg.Content)
	}
}
