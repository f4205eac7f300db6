package bot_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

const (
	uxGuild, uxChannel = "500", "501"
	otherGuild         = "700"
	permEditor         = discordgo.PermissionManageGuild
	permPlain          = discordgo.PermissionSendMessages
)

func memorySub(name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) discordgo.ApplicationCommandInteractionData {
	if opts == nil {
		opts = []*discordgo.ApplicationCommandInteractionDataOption{}
	}
	return discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: name, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}}
}

func strOpt(name, v string) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionString, Value: v}
}

func intOpt(name string, v int64) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionInteger, Value: float64(v)}
}

// press runs a button press and returns what the presser was shown and whether only they
// saw it.
func (tb *testBot) press(t *testing.T, guild string, user *discordgo.User, perms int64, customID string) (*fakediscord.SentMessage, bool) {
	t.Helper()
	return tb.interact(t, tb.fake.ComponentClick(guild, uxChannel, user, perms, customID, nil))
}

// responseOf returns the first interaction callback of i.
func (tb *testBot) responseOf(t *testing.T, i *discordgo.Interaction) *fakediscord.InteractionResponse {
	t.Helper()
	for _, r := range tb.fake.InteractionResponses() {
		if r.Token == i.Token {
			return r
		}
	}
	t.Fatalf("interaction %s was not answered", i.ID)
	return nil
}

func (tb *testBot) current(t *testing.T, owner memory.Owner, id int64) *memory.Memory {
	t.Helper()
	m, err := tb.store.Channels.Lookup(context.Background(), owner, id)
	if err != nil {
		t.Fatalf("lookup #%d: %v", id, err)
	}
	return m
}

// customIDs lists the custom IDs of a message's buttons, row by row.
func customIDs(m *fakediscord.SentMessage) [][]string {
	var out [][]string
	for _, c := range m.Components {
		row, ok := c.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		var ids []string
		for _, b := range row.Components {
			if btn, ok := b.(*discordgo.Button); ok {
				ids = append(ids, btn.CustomID)
			}
		}
		out = append(out, ids)
	}
	return out
}

func TestChatNoticesCarryUndoAndEdit(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	saved := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "The raid is on Friday"})
	notices := []chat.Notice{
		{Action: tools.NoticeSaved, Scope: memory.ScopeServer, MemoryID: saved.ID, Content: saved.Content, Version: 1},
		{Action: tools.NoticeDeleted, Scope: memory.ScopePersonal, MemoryID: 77, Content: "old", UserID: alice.ID, Version: 4},
	}
	// Seven changes in one turn: Discord allows five rows of buttons.
	for i := range 5 {
		notices = append(notices, chat.Notice{Action: tools.NoticeUpdated, Scope: memory.ScopeServer, MemoryID: int64(100 + i), Content: "x", Version: 2})
	}
	tb.turner.fn = func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "Noted.", Notices: notices}, nil }
	m := tb.fake.GuildMessage(uxGuild, uxChannel, alice, "<@"+tb.fake.BotUser().ID+"> remember the raid", tb.fake.BotUser())
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
	sent := tb.fake.Messages(uxChannel)
	if len(sent) != 1 {
		t.Fatalf("sent %d messages", len(sent))
	}
	id := strconv.FormatInt(saved.ID, 10)
	want := [][]string{
		{"kioku:undo:s:" + id + ":1", "kioku:edit:s:" + id + ":1"},
		{"kioku:undo:p:77:4"}, // a forget has nothing left to edit
		{"kioku:undo:s:100:2", "kioku:edit:s:100:2"},
		{"kioku:undo:s:101:2", "kioku:edit:s:101:2"},
		{"kioku:undo:s:102:2", "kioku:edit:s:102:2"},
	}
	if got := customIDs(sent[0]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("buttons = %v, want %v", got, want)
	}
	if b := buttonsOf(sent[0]); b[0].Label != "Undo #"+id || b[1].Label != "Edit #"+id {
		t.Errorf("labels = %q, %q", b[0].Label, b[1].Label)
	}
	if !strings.Contains(sent[0].Content, "📌 Remembered (server) #"+id) {
		t.Errorf("notice text = %q", sent[0].Content)
	}

	// In a server whose language is Japanese the buttons are too.
	if err := tb.session.State.GuildAdd(&discordgo.Guild{ID: "600", PreferredLocale: "ja"}); err != nil {
		t.Fatal(err)
	}
	tb.turner.fn = func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "了解", Notices: notices[:1]}, nil }
	m = tb.fake.GuildMessage("600", "601", alice, "<@"+tb.fake.BotUser().ID+"> 覚えて", tb.fake.BotUser())
	tb.bot.OnMessageCreate(tb.session, &discordgo.MessageCreate{Message: m})
	if sent := tb.fake.Messages("601"); len(sent) != 1 || buttonsOf(sent[0])[0].Label != "元に戻す #"+id || buttonsOf(sent[0])[1].Label != "編集 #"+id {
		t.Errorf("Japanese guild's buttons = %+v", buttonsOf(sent[0]))
	}
}

func TestNoticeButtonsOnCommandReplies(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	msg, ephemeral := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor,
		memorySub("add", strOpt("content", "Standup is at 10:00"))))
	mems, _, _ := tb.store.Memories.List(context.Background(), memory.ServerOwner(uxGuild), memory.ListOptions{})
	if len(mems) != 1 || !ephemeral {
		t.Fatalf("add made %d memories (ephemeral %v)", len(mems), ephemeral)
	}
	id := strconv.FormatInt(mems[0].ID, 10)
	if got := fmt.Sprint(customIDs(msg)); got != "[[kioku:undo:s:"+id+":1 kioku:edit:s:"+id+":1]]" {
		t.Errorf("add reply buttons = %s", got)
	}
	msg, _ = tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor,
		memorySub("edit", intOpt("id", mems[0].ID), strOpt("content", "Standup is at 10:30"))))
	if got := fmt.Sprint(customIDs(msg)); got != "[[kioku:undo:s:"+id+":2 kioku:edit:s:"+id+":2]]" {
		t.Errorf("edit reply buttons = %s", got)
	}
	msg, _ = tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("forget", intOpt("id", mems[0].ID))))
	if got := fmt.Sprint(customIDs(msg)); got != "[[kioku:undo:s:"+id+":3]]" {
		t.Errorf("forget reply buttons = %s", got)
	}
	// Undo of the forget brings it back.
	msg, ephemeral = tb.press(t, uxGuild, alice, permEditor, "kioku:undo:s:"+id+":3")
	if !ephemeral || !strings.Contains(msg.Content, "Undid the forget of #"+id+": it is back, now version 4") {
		t.Errorf("undo of forget answered %q (ephemeral %v)", msg.Content, ephemeral)
	}
	if m := tb.current(t, memory.ServerOwner(uxGuild), mems[0].ID); m.Deleted() || m.Version != 4 {
		t.Errorf("after undo: deleted %v, version %d", m.Deleted(), m.Version)
	}
}

func TestUndoButton(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	server := memory.ServerOwner(uxGuild)
	ctx := context.Background()

	// The wording of a memory that does not exist, for the refusals that must read the same.
	notFound, _ := tb.press(t, uxGuild, bob, permEditor, "kioku:undo:p:999999:1")
	if notFound.Content != "There is no memory #999999 that you can see here." {
		t.Fatalf("not found reads %q", notFound.Content)
	}
	notFoundFor := func(id int64) string {
		return strings.Replace(notFound.Content, "#999999", "#"+strconv.FormatInt(id, 10), 1)
	}

	t.Run("RevertsAnEditThenSecondPressIsANoOp", func(t *testing.T) {
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Meetup on Saturday"})
		content := "Meetup on Sunday"
		edited, err := tb.store.Memories.Modify(ctx, server, m.ID, memory.Change{Content: &content}, memory.UserActor(alice.ID))
		if err != nil {
			t.Fatal(err)
		}
		button := fmt.Sprintf("kioku:undo:s:%d:%d", m.ID, edited.Version)
		msg, ephemeral := tb.press(t, uxGuild, alice, permEditor, button)
		want := fmt.Sprintf("↩️ Undid the edit of #%d: now version 3: Meetup on Saturday", m.ID)
		if msg.Content != want || !ephemeral {
			t.Errorf("undo answered %q (ephemeral %v), want %q", msg.Content, ephemeral, want)
		}
		if got := fmt.Sprint(customIDs(msg)); got != fmt.Sprintf("[[kioku:undo:s:%d:3 kioku:edit:s:%d:3]]", m.ID, m.ID) {
			t.Errorf("the undo's own buttons = %s", got)
		}
		if cur := tb.current(t, server, m.ID); cur.Content != "Meetup on Saturday" || cur.Version != 3 {
			t.Errorf("after undo: %q v%d", cur.Content, cur.Version)
		}
		msg, ephemeral = tb.press(t, uxGuild, alice, permEditor, button)
		if msg.Content != fmt.Sprintf("That change to #%d was already undone; nothing changed.", m.ID) || !ephemeral {
			t.Errorf("second press answered %q (ephemeral %v)", msg.Content, ephemeral)
		}
		if cur := tb.current(t, server, m.ID); cur.Version != 3 {
			t.Errorf("second press changed the memory to v%d", cur.Version)
		}
	})

	t.Run("OtherMemberOnPersonalReadsAsNotFound", func(t *testing.T) {
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, GuildID: uxGuild,
			Content: "Alice is allergic to peanuts"})
		for _, perms := range []int64{permPlain, permEditor | discordgo.PermissionAdministrator} {
			msg, ephemeral := tb.press(t, uxGuild, bob, perms, fmt.Sprintf("kioku:undo:p:%d:1", m.ID))
			if msg.Content != notFoundFor(m.ID) || !ephemeral {
				t.Errorf("bob (perms %d) pressing alice's Undo read %q, want the not-found wording %q", perms, msg.Content, notFoundFor(m.ID))
			}
		}
		// As server memory the id names nothing either.
		if msg, _ := tb.press(t, uxGuild, bob, permEditor, fmt.Sprintf("kioku:undo:s:%d:1", m.ID)); msg.Content != notFoundFor(m.ID) {
			t.Errorf("alice's id as server memory read %q", msg.Content)
		}
		if cur := tb.current(t, memory.PersonalOwner(alice.ID), m.ID); cur.Deleted() || cur.Version != 1 {
			t.Errorf("alice's memory changed: deleted %v v%d", cur.Deleted(), cur.Version)
		}
		// Alice herself may.
		msg, _ := tb.press(t, uxGuild, alice, permPlain, fmt.Sprintf("kioku:undo:p:%d:1", m.ID))
		if !strings.Contains(msg.Content, "Undid the addition") {
			t.Errorf("alice's own Undo answered %q", msg.Content)
		}
	})

	t.Run("MemberWithoutPermissionOnServerMemory", func(t *testing.T) {
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Rules are pinned in #rules"})
		msg, ephemeral := tb.press(t, uxGuild, bob, permPlain, fmt.Sprintf("kioku:undo:s:%d:1", m.ID))
		want := "Changing this server's memory needs the Manage Server permission or the server's editor role. You can still keep personal memories with scope:personal."
		if msg.Content != want || !ephemeral {
			t.Errorf("plain member's Undo answered %q (ephemeral %v)", msg.Content, ephemeral)
		}
		if cur := tb.current(t, server, m.ID); cur.Deleted() || cur.Version != 1 {
			t.Errorf("refused Undo changed the memory: deleted %v v%d", cur.Deleted(), cur.Version)
		}
	})

	t.Run("MemberMayUndoTheirOwnServerChange", func(t *testing.T) {
		// Saved by kioku in bob's conversation (self-teaching): bob may take it back.
		res, err := tb.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Bob thinks the wiki moved"},
			memory.ModelActor(bob.ID))
		if err != nil {
			t.Fatal(err)
		}
		id := res.Memory.ID
		carol := tb.fake.NewUser("carol")
		if msg, _ := tb.press(t, uxGuild, carol, permPlain, fmt.Sprintf("kioku:undo:s:%d:1", id)); !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("carol's Undo of bob's change answered %q", msg.Content)
		}
		if msg, _ := tb.press(t, uxGuild, bob, permPlain, fmt.Sprintf("kioku:undo:s:%d:1", id)); !strings.Contains(msg.Content, "Undid the addition") {
			t.Errorf("bob's Undo of his own change answered %q", msg.Content)
		}
		if cur := tb.current(t, server, id); !cur.Deleted() {
			t.Error("bob's Undo left the memory")
		}
		// The undo is bob's change now, so he may redo it; carol still may not.
		if msg, _ := tb.press(t, uxGuild, carol, permPlain, fmt.Sprintf("kioku:undo:s:%d:2", id)); !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("carol's Undo of bob's undo answered %q", msg.Content)
		}
	})

	t.Run("StaleVersionIsRefusedAndChangesNothing", func(t *testing.T) {
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Dues are 5 euros"})
		for _, c := range []string{"Dues are 6 euros", "Dues are 7 euros"} {
			if _, err := tb.store.Memories.Modify(ctx, server, m.ID, memory.Change{Content: &c}, memory.UserActor(alice.ID)); err != nil {
				t.Fatal(err)
			}
		}
		msg, _ := tb.press(t, uxGuild, alice, permEditor, fmt.Sprintf("kioku:undo:s:%d:2", m.ID))
		want := fmt.Sprintf("Memory #%d changed since this notice (it is at version 3 now), so this button no longer applies; see /memory history.", m.ID)
		if msg.Content != want {
			t.Errorf("stale Undo answered %q, want %q", msg.Content, want)
		}
		if cur := tb.current(t, server, m.ID); cur.Content != "Dues are 7 euros" || cur.Version != 3 {
			t.Errorf("stale Undo changed the memory: %q v%d", cur.Content, cur.Version)
		}
	})

	t.Run("ForgedIDOfAnotherGuildReadsAsNotFound", func(t *testing.T) {
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: otherGuild, Content: "Other guild's plans"})
		msg, _ := tb.press(t, uxGuild, alice, permEditor|discordgo.PermissionAdministrator, fmt.Sprintf("kioku:undo:s:%d:1", m.ID))
		if msg.Content != notFoundFor(m.ID) {
			t.Errorf("another guild's memory read %q", msg.Content)
		}
		if cur := tb.current(t, memory.ServerOwner(otherGuild), m.ID); cur.Deleted() || cur.Version != 1 {
			t.Errorf("the other guild's memory changed")
		}
		// Server memory does not exist in DMs.
		msg, _ = tb.interact(t, tb.fake.ComponentClick("", "800", alice, 0, fmt.Sprintf("kioku:undo:s:%d:1", m.ID), nil))
		if msg.Content != notFoundFor(m.ID) {
			t.Errorf("server Undo in a DM read %q", msg.Content)
		}
	})

	t.Run("MalformedCustomIDs", func(t *testing.T) {
		for _, id := range []string{"kioku:undo", "kioku:undo:s:1", "kioku:undo:s:01:1", "kioku:undo:s:1:0", "kioku:undo:x:1:1",
			"kioku:undo:s:-1:1", "kioku:undo:s:1:1:extra", "kioku:undo:s:99999999999999999999999:1", "kioku:undo:s: 1:1",
			"kioku:undo:S:1:1", "kioku:undo:s:1:1\n"} {
			msg, ephemeral := tb.press(t, uxGuild, alice, permEditor, id)
			if msg.Content != "That button or form is not one I recognise; run the command again." || !ephemeral {
				t.Errorf("%q answered %q", id, msg.Content)
			}
		}
	})

	t.Run("ExpiresWithTheRecoverWindow", func(t *testing.T) {
		short := newTestBotOn(t, tb.store, func(c *bot.Config) { c.Store.RecoverWindow = time.Millisecond })
		m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Old news"})
		time.Sleep(5 * time.Millisecond)
		msg, _ := short.interact(t, short.fake.ComponentClick(uxGuild, uxChannel, alice, permEditor, fmt.Sprintf("kioku:undo:s:%d:1", m.ID), nil))
		if !strings.HasPrefix(msg.Content, "This Undo button has expired") {
			t.Errorf("expired Undo answered %q", msg.Content)
		}
		if cur := tb.current(t, server, m.ID); cur.Deleted() {
			t.Error("an expired Undo forgot the memory")
		}
	})

	t.Run("Japanese", func(t *testing.T) {
		i := tb.fake.ComponentClick(uxGuild, uxChannel, bob, permEditor, "kioku:undo:p:999998:1", nil)
		i.Locale = discordgo.Japanese
		if msg, _ := tb.interact(t, i); msg.Content != "ここであなたが見られる記憶 #999998 はありません。" {
			t.Errorf("Japanese not found = %q", msg.Content)
		}
	})
}

func TestEditButtonAndModal(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	server := memory.ServerOwner(uxGuild)
	m := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Type: memory.TypeEvent,
		Content: "Game night is Thursday", Tags: []string{"games"}})
	ref := fmt.Sprintf("%d:1", m.ID)

	i := tb.fake.ComponentClick(uxGuild, uxChannel, alice, permEditor, "kioku:edit:s:"+ref, nil)
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
	r := tb.responseOf(t, i)
	if r.Type != discordgo.InteractionResponseModal || r.CustomID != "kioku:editm:s:"+ref || r.Title != fmt.Sprintf("Edit memory #%d", m.ID) {
		t.Fatalf("Edit opened %d %q %q", r.Type, r.CustomID, r.Title)
	}
	var inputs []string
	for _, c := range r.Data.Components {
		for _, in := range c.(*discordgo.ActionsRow).Components {
			ti := in.(*discordgo.TextInput)
			inputs = append(inputs, fmt.Sprintf("%s=%q/%d", ti.CustomID, ti.Value, ti.Style))
		}
	}
	if got := strings.Join(inputs, " "); got != `content="Game night is Thursday"/2 type="event"/1 tags="games"/1` {
		t.Errorf("modal inputs = %s", got)
	}

	t.Run("PlainMemberCannotOpenIt", func(t *testing.T) {
		msg, _ := tb.press(t, uxGuild, bob, permPlain, "kioku:edit:s:"+ref)
		if !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("plain member's Edit answered %q", msg.Content)
		}
	})

	submit := func(user *discordgo.User, perms int64, customID string, values map[string]string) (*fakediscord.SentMessage, bool) {
		return tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, user, perms, customID, values, nil))
	}

	t.Run("ValidationErrorsSaveNothing", func(t *testing.T) {
		for _, c := range []struct {
			values map[string]string
			want   string
		}{
			{map[string]string{"content": "  "}, "The content is empty; nothing was saved."},
			{map[string]string{"content": "ok", "type": "gossip"}, "“gossip” is not a type of memory; use one of: fact, preference, decision, procedural, semantic, event. Nothing was saved."},
			{map[string]string{"content": strings.Repeat("あ", memory.MaxContentRunes+1)}, "The content is 2001 characters long; at most 2000 fit. Nothing was saved."},
		} {
			msg, ephemeral := submit(alice, permEditor, "kioku:editm:s:"+ref, c.values)
			if msg.Content != c.want || !ephemeral {
				t.Errorf("submit %v answered %q", c.values, msg.Content)
			}
		}
		if cur := tb.current(t, server, m.ID); cur.Version != 1 {
			t.Errorf("invalid submits changed the memory to v%d", cur.Version)
		}
	})

	t.Run("SubmitEdits", func(t *testing.T) {
		msg, ephemeral := submit(alice, permEditor, "kioku:editm:s:"+ref,
			map[string]string{"content": "Game night is Friday\nBring snacks", "type": "event", "tags": "games, food"})
		want := fmt.Sprintf("✏️ Updated (server) #%d, now version 2: Game night is Friday Bring snacks", m.ID)
		if msg.Content != want || !ephemeral {
			t.Errorf("submit answered %q, want %q", msg.Content, want)
		}
		cur := tb.current(t, server, m.ID)
		// The store keeps content on one line, as every write path does.
		if cur.Content != "Game night is Friday Bring snacks" || strings.Join(cur.Tags, ",") != "games,food" || cur.Version != 2 {
			t.Errorf("after submit: %q %v v%d", cur.Content, cur.Tags, cur.Version)
		}
	})

	t.Run("ConflictIsReported", func(t *testing.T) {
		// The form was opened at version 1; the memory is at 2 now.
		msg, _ := submit(alice, permEditor, "kioku:editm:s:"+ref, map[string]string{"content": "Game night is Saturday"})
		want := fmt.Sprintf("Memory #%d changed while the form was open (you edited version 1, it is at version 2 now). Nothing was saved; open it again to edit the latest version.", m.ID)
		if msg.Content != want {
			t.Errorf("stale submit answered %q", msg.Content)
		}
		if cur := tb.current(t, server, m.ID); cur.Version != 2 || !strings.HasPrefix(cur.Content, "Game night is Friday") {
			t.Errorf("stale submit changed the memory: %q v%d", cur.Content, cur.Version)
		}
	})

	t.Run("SubmitByOtherMemberOfPersonalReadsAsNotFound", func(t *testing.T) {
		p := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: "Alice's PIN hint"})
		msg, _ := submit(bob, permEditor, fmt.Sprintf("kioku:editm:p:%d:1", p.ID), map[string]string{"content": "pwned"})
		if msg.Content != fmt.Sprintf("There is no memory #%d that you can see here.", p.ID) {
			t.Errorf("bob's submit answered %q", msg.Content)
		}
		if cur := tb.current(t, memory.PersonalOwner(alice.ID), p.ID); cur.Content != "Alice's PIN hint" {
			t.Errorf("alice's memory now says %q", cur.Content)
		}
	})

	t.Run("EditCommandWithoutContentOpensTheForm", func(t *testing.T) {
		i := tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("edit", intOpt("id", m.ID)))
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		if r := tb.responseOf(t, i); r.Type != discordgo.InteractionResponseModal || r.CustomID != fmt.Sprintf("kioku:editm:s:%d:2", m.ID) {
			t.Errorf("/memory edit id: answered %d %q", r.Type, r.CustomID)
		}
	})
}

func TestAddModal(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	count := func(owner memory.Owner) int {
		_, n, err := tb.store.Memories.List(context.Background(), owner, memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	i := tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("add", strOpt("type", "decision"),
		&discordgo.ApplicationCommandInteractionDataOption{Name: "pinned", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}))
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
	r := tb.responseOf(t, i)
	if r.Type != discordgo.InteractionResponseModal || r.CustomID != "kioku:addm:s:1" || r.Title != "Remember something" {
		t.Fatalf("/memory add without content answered %d %q %q", r.Type, r.CustomID, r.Title)
	}
	if len(r.Data.Components) != 3 {
		t.Fatalf("modal has %d rows", len(r.Data.Components))
	}
	if ti := r.Data.Components[1].(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput); ti.Value != "decision" {
		t.Errorf("type prefilled %q", ti.Value)
	}

	t.Run("PlainMemberIsRefusedBeforeTheForm", func(t *testing.T) {
		msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, bob, permPlain, memorySub("add")))
		if !strings.Contains(msg.Content, "Manage Server") {
			t.Errorf("plain member's /memory add answered %q", msg.Content)
		}
		// A forged submit is checked again.
		msg, _ = tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, bob, permPlain, "kioku:addm:s:0", map[string]string{"content": "sneaky"}, nil))
		if !strings.Contains(msg.Content, "Manage Server") || count(memory.ServerOwner(uxGuild)) != 0 {
			t.Errorf("plain member's submit answered %q", msg.Content)
		}
	})

	t.Run("InvalidSubmitSavesNothing", func(t *testing.T) {
		msg, ephemeral := tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, alice, permEditor, "kioku:addm:s:1",
			map[string]string{"content": "Ship on Monday", "type": "vibe"}, nil))
		if !strings.HasPrefix(msg.Content, "“vibe” is not a type of memory") || !ephemeral {
			t.Errorf("invalid submit answered %q", msg.Content)
		}
		if n := count(memory.ServerOwner(uxGuild)); n != 0 {
			t.Errorf("invalid submit saved %d memories", n)
		}
		for _, bad := range []string{"kioku:addm:s", "kioku:addm:x:1", "kioku:addm:s:2", "kioku:addm:s:1:1"} {
			msg, _ := tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, alice, permEditor, bad, map[string]string{"content": "x"}, nil))
			if !strings.Contains(msg.Content, "not one I recognise") {
				t.Errorf("%q answered %q", bad, msg.Content)
			}
		}
	})

	t.Run("SubmitSaves", func(t *testing.T) {
		msg, _ := tb.interact(t, tb.fake.ModalSubmit(uxGuild, uxChannel, alice, permEditor, "kioku:addm:s:1",
			map[string]string{"content": "We ship on Monday\nafter the review", "type": "decision", "tags": "release, Plan"}, nil))
		mems, _, _ := tb.store.Memories.List(context.Background(), memory.ServerOwner(uxGuild), memory.ListOptions{})
		if len(mems) != 1 {
			t.Fatalf("submit saved %d memories: %q", len(mems), msg.Content)
		}
		got := mems[0]
		if got.Content != "We ship on Monday after the review" || got.Type != memory.TypeDecision || !got.Pinned ||
			strings.Join(got.Tags, ",") != "release,plan" || got.Provenance.AuthorID != alice.ID {
			t.Errorf("saved %+v", got)
		}
		want := fmt.Sprintf("📌 Remembered (server) #%d: We ship on Monday after the review", got.ID)
		if msg.Content != want {
			t.Errorf("submit answered %q, want %q", msg.Content, want)
		}
		if fmt.Sprint(customIDs(msg)) != fmt.Sprintf("[[kioku:undo:s:%d:1 kioku:edit:s:%d:1]]", got.ID, got.ID) {
			t.Errorf("submit reply buttons %v", customIDs(msg))
		}
	})
}

func TestIDAutocomplete(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	aliceP := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, GuildID: uxGuild, Content: "Alice goes climbing on Sundays"})
	bobP := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: bob.ID, GuildID: uxGuild, Content: "Bob goes climbing at night"})
	serverM := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "The climbing wall opens at 9"})
	testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: otherGuild, Content: "Other guild climbing club"})

	complete := func(user *discordgo.User, sub, typed string, extra ...*discordgo.ApplicationCommandInteractionDataOption) []*discordgo.ApplicationCommandOptionChoice {
		t.Helper()
		opts := append([]*discordgo.ApplicationCommandInteractionDataOption{{Name: "id", Type: discordgo.ApplicationCommandOptionInteger,
			Value: typed, Focused: true}}, extra...)
		i := tb.fake.Autocomplete(uxGuild, uxChannel, user, permPlain, memorySub(sub, opts...))
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		r := tb.responseOf(t, i)
		if r.Type != discordgo.InteractionApplicationCommandAutocompleteResult {
			t.Fatalf("autocomplete answered type %d", r.Type)
		}
		return r.Choices
	}
	names := func(cs []*discordgo.ApplicationCommandOptionChoice) string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s=%v", c.Name, c.Value))
		}
		return strings.Join(out, " | ")
	}

	personal := strOpt("scope", "personal")
	got := names(complete(bob, "show", "climb", personal))
	if want := fmt.Sprintf("#%d · Bob goes climbing at night=%d", bobP.ID, bobP.ID); got != want {
		t.Errorf("bob's personal suggestions = %q, want %q", got, want)
	}
	got = names(complete(bob, "edit", "climb"))
	if want := fmt.Sprintf("#%d · The climbing wall opens at 9=%d", serverM.ID, serverM.ID); got != want {
		t.Errorf("bob's server suggestions = %q, want %q", got, want)
	}
	// Typing alice's id as digits finds nothing of hers.
	for _, sub := range []string{"show", "edit", "forget", "history", "recover", "undo"} {
		for _, typed := range []string{strconv.FormatInt(aliceP.ID, 10), "Alice", "climb", ""} {
			for _, extra := range [][]*discordgo.ApplicationCommandInteractionDataOption{nil, {personal}} {
				if got := names(complete(bob, sub, typed, extra...)); strings.Contains(got, "Alice") || strings.Contains(got, "Other guild") {
					t.Errorf("/memory %s typed %q offered bob %q", sub, typed, got)
				}
			}
		}
	}

	t.Run("RecoverOffersForgottenOnes", func(t *testing.T) {
		if _, err := tb.store.Memories.Forget(context.Background(), memory.PersonalOwner(bob.ID), []int64{bobP.ID}, memory.UserActor(bob.ID), "test"); err != nil {
			t.Fatal(err)
		}
		if got := names(complete(bob, "recover", "", personal)); got != fmt.Sprintf("#%d · Bob goes climbing at night=%d", bobP.ID, bobP.ID) {
			t.Errorf("recover suggestions = %q", got)
		}
		if got := names(complete(bob, "show", "", personal)); got != "" {
			t.Errorf("show suggests forgotten memories: %q", got)
		}
	})

	t.Run("Limits", func(t *testing.T) {
		long := strings.Repeat("長い記憶の内容です。", 30)
		for i := range 40 {
			testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: fmt.Sprintf("%s %d", long, i)})
		}
		cs := complete(alice, "show", "")
		if len(cs) != 25 {
			t.Errorf("%d choices, Discord allows 25", len(cs))
		}
		for _, c := range cs {
			if n := utf8.RuneCountInString(c.Name); n > 100 || !utf8.ValidString(c.Name) {
				t.Errorf("choice name of %d characters (valid UTF-8 %v): %q", n, utf8.ValidString(c.Name), c.Name)
			}
			if _, ok := c.Value.(float64); !ok {
				t.Errorf("choice value %v (%T) is not a number", c.Value, c.Value)
			}
		}
		if n := utf8.RuneCountInString(cs[0].Name); n != 100 || !strings.HasSuffix(cs[0].Name, "…") {
			t.Errorf("long name cut to %d characters: %q", n, cs[0].Name)
		}
	})

	t.Run("OtherOptionsAreNotAnswered", func(t *testing.T) {
		before := len(tb.fake.InteractionResponses())
		i := tb.fake.Autocomplete(uxGuild, uxChannel, bob, permPlain, memorySub("search",
			&discordgo.ApplicationCommandInteractionDataOption{Name: "query", Type: discordgo.ApplicationCommandOptionString, Value: "x", Focused: true}))
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		if n := len(tb.fake.InteractionResponses()); n != before {
			t.Errorf("autocomplete of an option kioku does not complete was answered")
		}
	})
}

func TestListPagesWithFilters(t *testing.T) {
	tb := newTestBot(t)
	alice, bob := tb.fake.NewUser("alice"), tb.fake.NewUser("bob")
	for i := range 25 {
		m := memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: fmt.Sprintf("Raid note %d", i+1), Type: memory.TypeEvent, Source: memory.SourceTool,
			Tags: []string{"raid"}, Provenance: memory.Provenance{AuthorID: alice.ID, ChannelID: uxChannel, MessageID: strconv.Itoa(900000 + i)}}
		if i%2 == 1 {
			m.Tags, m.Content = []string{"chat"}, fmt.Sprintf("Chat note %d", i+1)
		}
		testkit.MustRemember(t, tb.store, m)
	}
	testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: "Bob's server note", Tags: []string{"raid"},
		Provenance: memory.Provenance{AuthorID: bob.ID}})
	testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: "Alice's raid diary", Tags: []string{"raid"}})

	i := tb.fake.SlashCommand(uxGuild, uxChannel, alice, permPlain, memorySub("list", strOpt("tag", "Raid"),
		&discordgo.ApplicationCommandInteractionDataOption{Name: "author", Type: discordgo.ApplicationCommandOptionUser, Value: alice.ID}))
	msg, ephemeral := tb.interact(t, i)
	if !ephemeral || len(msg.Embeds) != 1 {
		t.Fatalf("list answered %+v", msg)
	}
	e := msg.Embeds[0]
	if e.Footer.Text != "Page 1 of 2 · 13 memories" {
		t.Errorf("footer = %q", e.Footer.Text)
	}
	if strings.Contains(e.Description, "Chat note") || strings.Contains(e.Description, "Bob's") || strings.Contains(e.Description, "diary") {
		t.Errorf("filtered page shows %q", e.Description)
	}
	if !strings.Contains(e.Description, "[jump to source message](https://discord.com/channels/500/501/900024)") {
		t.Errorf("no jump link in %q", e.Description)
	}
	if len(e.Fields) != 1 || e.Fields[0].Value != "tag raid · by <@"+alice.ID+">" {
		t.Errorf("filters field = %+v", e.Fields)
	}
	ids := customIDs(msg)
	want := fmt.Sprintf("[[kioku:list:p:s:0::%s::raid kioku:list:n:s:1::%s::raid]]", alice.ID, alice.ID)
	if fmt.Sprint(ids) != want {
		t.Fatalf("page buttons = %v, want %s", ids, want)
	}
	original, _ := tb.fake.OriginalResponse(i)
	next := tb.fake.ComponentClick(uxGuild, uxChannel, alice, permPlain, ids[0][1], original)
	tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: next})
	r := tb.responseOf(t, next)
	if r.Type != discordgo.InteractionResponseUpdateMessage || r.Data.Embeds[0].Footer.Text != "Page 2 of 2 · 13 memories" {
		t.Errorf("next page answered %d %+v", r.Type, r.Data)
	}
	if !strings.HasSuffix(r.Data.Embeds[0].Description, "\nRaid note 1") {
		t.Errorf("page 2 = %q", r.Data.Embeds[0].Description)
	}

	t.Run("PressIsCheckedAgainstThePresser", func(t *testing.T) {
		// Bob presses a personal page button carrying alice's filters: he sees his own (none).
		msg, _ := tb.press(t, uxGuild, bob, permPlain, "kioku:list:n:p:0:::raid")
		if strings.Contains(msg.Content+fmt.Sprint(msg.Embeds), "diary") {
			t.Errorf("bob's press showed alice's personal memory: %q %+v", msg.Content, msg.Embeds)
		}
		msg, _ = tb.press(t, uxGuild, alice, permPlain, "kioku:list:n:p:0:::raid")
		if len(msg.Embeds) != 1 || !strings.Contains(msg.Embeds[0].Description, "diary") {
			t.Errorf("alice's own personal page = %+v", msg)
		}
		for _, bad := range []string{"kioku:list:n:s:-1:::", "kioku:list:n:s:1:gossip::", "kioku:list:n:q:1:::", "kioku:list:n:s:1::abc:", "kioku:list:n:s:01:::"} {
			if msg, _ := tb.press(t, uxGuild, alice, permPlain, bad); !strings.Contains(msg.Content, "not one I recognise") {
				t.Errorf("%q answered %q", bad, msg.Content)
			}
		}
	})
}

// TestListWhen: /memory list when:upcoming lists the plans and events still to come,
// soonest first, and when:past those gone by; each line shows the day it is about. The
// filter survives paging, and a page button sent before the filter existed still works.
func TestListWhen(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	now := time.Now().UTC()
	remember := func(content string, said time.Time) {
		testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: content,
			Type: memory.TypeEvent, CreatedAt: said, UpdatedAt: said})
	}
	remember("The raid is tomorrow", now.AddDate(0, 0, -10))
	remember("Board game night is tomorrow", now)
	remember("The meetup is in two weeks", now)
	remember("Raids are on Fridays", now)
	list := func(when string) string {
		t.Helper()
		msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permPlain, memorySub("list", strOpt("when", when))))
		if len(msg.Embeds) != 1 {
			t.Fatalf("when:%s answered %+v", when, msg)
		}
		return msg.Embeds[0].Description
	}
	upcoming := list("upcoming")
	if !strings.Contains(upcoming, "Board game night") || !strings.Contains(upcoming, "meetup") ||
		strings.Contains(upcoming, "The raid is tomorrow") || strings.Contains(upcoming, "Fridays") {
		t.Errorf("when:upcoming lists %q", upcoming)
	}
	if strings.Index(upcoming, "Board game night") > strings.Index(upcoming, "meetup") {
		t.Errorf("when:upcoming is not soonest first: %q", upcoming)
	}
	if !strings.Contains(upcoming, "📅 <t:") || !strings.Contains(upcoming, ":R>)") {
		t.Errorf("when:upcoming lines do not show their day: %q", upcoming)
	}
	if past := list("past"); !strings.Contains(past, "The raid is tomorrow") || strings.Contains(past, "Board game") {
		t.Errorf("when:past lists %q", past)
	}
	if msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permPlain, memorySub("list", strOpt("when", "someday")))); len(msg.Embeds) != 0 {
		t.Errorf("when:someday answered a list: %+v", msg.Embeds)
	}
	// A page button keeps the filter; one of the shape sent before it has none.
	msg, _ := tb.press(t, uxGuild, alice, permPlain, "kioku:list:n:s:0:::upcoming:")
	if len(msg.Embeds) != 1 || strings.Contains(msg.Embeds[0].Description, "Fridays") {
		t.Errorf("an upcoming page button answered %+v", msg)
	}
	msg, _ = tb.press(t, uxGuild, alice, permPlain, "kioku:list:n:s:0:::")
	if len(msg.Embeds) != 1 || !strings.Contains(msg.Embeds[0].Description, "Fridays") {
		t.Errorf("a page button without the timing field answered %+v", msg)
	}
}

func TestShowEmbed(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	ctx := context.Background()
	// Saved from a message with "Remember this": the provenance names the message.
	target := tb.fake.GuildMessage(uxGuild, uxChannel, alice, "The boss fight needs 8 players")
	tb.interact(t, tb.fake.MessageCommand(uxGuild, uxChannel, alice, permEditor, bot.RememberThisCommand, target))
	mems, _, _ := tb.store.Memories.List(ctx, memory.ServerOwner(uxGuild), memory.ListOptions{})
	if len(mems) != 1 {
		t.Fatalf("%d memories", len(mems))
	}
	m := mems[0]
	content := "The boss fight needs 10 players"
	if _, err := tb.store.Memories.Modify(ctx, memory.ServerOwner(uxGuild), m.ID, memory.Change{Content: &content}, memory.UserActor(alice.ID)); err != nil {
		t.Fatal(err)
	}
	msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permPlain, memorySub("show", intOpt("id", m.ID))))
	if len(msg.Embeds) != 1 {
		t.Fatalf("show answered %+v", msg)
	}
	e := msg.Embeds[0]
	fields := map[string]string{}
	for _, f := range e.Fields {
		fields[f.Name] = f.Value
	}
	link := fmt.Sprintf("[jump to source message](https://discord.com/channels/%s/%s/%s)", uxGuild, uxChannel, target.ID)
	for name, want := range map[string]string{"Version": "2", "From": "<@" + alice.ID + ">", "Learned in": "<#" + uxChannel + ">",
		"Source message": link, "Type": "fact"} {
		if fields[name] != want {
			t.Errorf("field %q = %q, want %q", name, fields[name], want)
		}
	}
	if h := fields["Latest changes"]; !strings.HasPrefix(h, "v2 update · <@"+alice.ID+">") || !strings.Contains(h, "\nv1 create") {
		t.Errorf("history field = %q", h)
	}
	if e.Title != fmt.Sprintf("Memory #%d (server)", m.ID) || e.Description != content {
		t.Errorf("title %q, description %q", e.Title, e.Description)
	}
	if fmt.Sprint(customIDs(msg)) != fmt.Sprintf("[[kioku:undo:s:%d:2 kioku:edit:s:%d:2]]", m.ID, m.ID) {
		t.Errorf("show buttons %v", customIDs(msg))
	}

	t.Run("LongestMemoryFitsDiscordsLimits", func(t *testing.T) {
		var tags []string
		for i := range 10 {
			tags = append(tags, fmt.Sprintf("tag-%02d-%s", i, strings.Repeat("x", 20)))
		}
		big := testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild,
			Content: strings.Repeat("記", memory.MaxContentRunes), Tags: tags, Pinned: true,
			Provenance: memory.Provenance{AuthorID: alice.ID, ChannelID: uxChannel}})
		for i := range 8 {
			c := strings.Repeat("改", memory.MaxContentRunes-1) + strconv.Itoa(i)
			if _, err := tb.store.Memories.Modify(ctx, memory.ServerOwner(uxGuild), big.ID, memory.Change{Content: &c}, memory.UserActor(alice.ID)); err != nil {
				t.Fatal(err)
			}
		}
		// The fake refuses payloads over Discord's limits, so an answer at all is the proof;
		// the counts are checked here too.
		msg, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permPlain, memorySub("show", intOpt("id", big.ID))))
		if len(msg.Embeds) != 1 {
			t.Fatalf("show answered %q", msg.Content)
		}
		e := msg.Embeds[0]
		total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
		for _, f := range e.Fields {
			total += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
		}
		if total > 6000 || len(e.Fields) > 25 {
			t.Errorf("embed of %d characters and %d fields", total, len(e.Fields))
		}
	})
}

func TestForgetByQueryOffersUndo(t *testing.T) {
	tb := newTestBot(t)
	alice := tb.fake.NewUser("alice")
	var ids []int64
	for _, c := range []string{"Pizza on Friday", "Pizza toppings: mushrooms"} {
		ids = append(ids, testkit.MustRemember(t, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: uxGuild, Content: c}).ID)
	}
	preview, _ := tb.interact(t, tb.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor, memorySub("forget", strOpt("query", "pizza"))))
	buttons := buttonsOf(preview)
	if len(buttons) != 2 {
		t.Fatalf("preview buttons %+v", buttons)
	}
	confirm := tb.fake.ComponentClick(uxGuild, uxChannel, alice, permEditor, buttons[0].CustomID, nil)
	msg, _ := tb.interact(t, confirm)
	var want [][]string
	for _, id := range []int64{ids[1], ids[0]} {
		want = append(want, []string{fmt.Sprintf("kioku:undo:s:%d:2", id)})
	}
	got := customIDs(msg)
	if len(got) != 2 || (fmt.Sprint(got) != fmt.Sprint(want) && fmt.Sprint(got) != fmt.Sprint([][]string{want[1], want[0]})) {
		t.Errorf("forget confirmation buttons = %v, want %v", got, want)
	}
	if msg, _ := tb.press(t, uxGuild, alice, permEditor, got[0][0]); !strings.Contains(msg.Content, "Undid the forget") {
		t.Errorf("undo after forget by query answered %q", msg.Content)
	}
}

// TestUndoWorksAfterRestart presses the Undo of a notice shown by one bot on a new bot over
// the same database: nothing the press needs lives in the process.
func TestUndoWorksAfterRestart(t *testing.T) {
	first := newTestBot(t)
	alice := first.fake.NewUser("alice")
	msg, _ := first.interact(t, first.fake.SlashCommand(uxGuild, uxChannel, alice, permEditor,
		memorySub("add", strOpt("content", "Library closes at 18:00"), strOpt("scope", "personal"))))
	ids := customIDs(msg)
	if len(ids) != 1 || len(ids[0]) != 2 {
		t.Fatalf("add reply buttons %v", ids)
	}
	second := newTestBotOn(t, first.store)
	reply, _ := second.interact(t, second.fake.ComponentClick(uxGuild, uxChannel, alice, permPlain, ids[0][0], nil))
	if !strings.Contains(reply.Content, "Undid the addition") {
		t.Errorf("Undo on a restarted bot answered %q", reply.Content)
	}
	mems, _, _ := first.store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
	if len(mems) != 0 {
		t.Errorf("%d personal memories left after the undo", len(mems))
	}
}
