package bot_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
)

// embedText is every text of a reply: its content and its embeds' titles, descriptions and
// fields.
func embedText(msg *fakediscord.SentMessage) string {
	var b strings.Builder
	b.WriteString(msg.Content)
	for _, e := range msg.Embeds {
		b.WriteString("\n" + e.Title + "\n" + e.Description)
		for _, f := range e.Fields {
			b.WriteString("\n" + f.Name + ": " + f.Value)
		}
	}
	return b.String()
}

// TestLifecycleInCommands: /memory show says a memory is superseded and by which memory,
// /memory history shows the change of lifecycle, /memory list and search leave superseded
// memories out until lifecycle: or include: asks for them.
func TestLifecycleInCommands(t *testing.T) {
	tb := newTestBot(t)
	ctx := context.Background()
	alice := tb.fake.NewUser("alice")
	me := memory.PersonalOwner(alice.ID)
	remember := func(content string) *memory.Memory {
		t.Helper()
		res, err := tb.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: alice.ID, Content: content}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	old := remember("Alice's home is in Osaka near the river")
	newer := remember("Alice moved to Tokyo last spring")
	if _, err := tb.store.Review.Supersede(ctx, me, old.ID, newer.ID, "test", "moved"); err != nil {
		t.Fatal(err)
	}
	personal := strOpt("scope", "personal")
	run := func(sub string, opts ...*discordgo.ApplicationCommandInteractionDataOption) string {
		t.Helper()
		msg, _ := tb.interact(t, tb.fake.SlashCommand("", "950", alice, 0, slashData("memory", sub, append(opts, personal)...)))
		return embedText(msg)
	}
	if out := run("show", intOpt("id", old.ID)); !strings.Contains(out, "Lifecycle: superseded by #"+strconv.FormatInt(newer.ID, 10)) {
		t.Errorf("/memory show:\n%s", out)
	}
	if out := run("history", intOpt("id", old.ID)); !strings.Contains(out, "lifecycle: active → superseded") {
		t.Errorf("/memory history:\n%s", out)
	}
	if out := run("list"); strings.Contains(out, "Osaka") || !strings.Contains(out, "Tokyo") {
		t.Errorf("/memory list shows a superseded memory or misses the current one:\n%s", out)
	}
	if out := run("list", strOpt("lifecycle", "superseded")); !strings.Contains(out, "Osaka") || strings.Contains(out, "Tokyo") {
		t.Errorf("/memory list lifecycle:superseded:\n%s", out)
	}
	if out := run("search", strOpt("query", "Osaka river")); strings.Contains(out, "home is in") {
		t.Errorf("/memory search found a superseded memory:\n%s", out)
	}
	if out := run("search", strOpt("query", "Osaka river"), strOpt("include", "superseded"), boolOpt("explain", true)); !strings.Contains(out, "home is in") ||
		!strings.Contains(out, "· superseded") {
		t.Errorf("/memory search include:superseded:\n%s", out)
	}
}

func boolOpt(name string, v bool) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionBoolean, Value: v}
}
