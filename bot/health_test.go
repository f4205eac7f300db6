package bot_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// TestStatusHealthForManagers: /kioku status shows members who manage the server the health
// score, its areas and the top findings with their fixes; other members keep the reduced
// status. A fix naming a memory of another server is not shown.
func TestStatusHealthForManagers(t *testing.T) {
	ctx := t.Context()
	provider := maintenance.Provider{Known: true, Calls: 10, Errors: 1}
	tb := newTestBot(t, func(c *bot.Config) { c.Provider = func() maintenance.Provider { return provider } })
	const guild, channel = "500", "501"
	// Break the word index of this server's memories, and leave a contradiction to
	// review in another server.
	var ids []int64
	for i := range 5 {
		res, err := tb.store.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
			Content: fmt.Sprintf("Deploys happen on day %d", i)}, "user:u1")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Memory.ID)
	}
	if err := tb.store.Memories.FlushIndex(ctx); err != nil { // in the word index before it is broken
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", sqlite.DSN(tb.store.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM memories_fts WHERE rowid = ?`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO memory_history (memory_id, scope_key, action, actor, created_at)
		VALUES (777, 'g:999', 'review_needed', 'pipeline', ?)`, tb.store.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}

	user := tb.fake.NewUser("someone")
	status := discordgo.ApplicationCommandInteractionData{Name: "kioku", Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: "status", Type: discordgo.ApplicationCommandOptionSubCommand}}}
	fields := func(perms int64) map[string]string {
		t.Helper()
		msg, _ := tb.interact(t, tb.fake.SlashCommand(guild, channel, user, perms, status))
		if len(msg.Embeds) == 0 {
			t.Fatalf("status answered without an embed: %q", msg.Content)
		}
		out := map[string]string{}
		for _, f := range msg.Embeds[0].Fields {
			out[f.Name] = f.Value
		}
		return out
	}

	manager := fields(discordgo.PermissionManageGuild)
	// index: 1 of 5 missing is critical (-60) → 40; mutations: one review (-10) → 90;
	// provider 90 % → 100; composite min(mean 80.5, 40 + 30) = 70.
	if got := manager["Health score"]; got != "70/100: degraded" {
		t.Errorf("manager's health score %q", got)
	}
	if got := manager["Health by area"]; got != "queue 100 · storage 100 · index 40 · provider 100 · mutations 90" {
		t.Errorf("manager's health areas %q", got)
	}
	top := manager["Top findings"]
	if !strings.Contains(top, "**critical** index") || !strings.Contains(top, "`kioku reindex`") {
		t.Errorf("top findings lack the index and its fix: %q", top)
	}
	if !strings.Contains(top, "contradictions") || strings.Contains(top, "999") || strings.Contains(top, "777") {
		t.Errorf("the other server's contradiction is missing or names it: %q", top)
	}

	member := fields(discordgo.PermissionSendMessages)
	for _, name := range []string{"Health score", "Health by area", "Top findings"} {
		if _, ok := member[name]; ok {
			t.Errorf("a plain member sees %q: %q", name, member[name])
		}
	}
	if _, ok := member["Server memory"]; !ok {
		t.Errorf("a plain member lost the reduced status: %v", member)
	}
}

// Without provider counts (a bot given none) the provider is left out, not guessed.
func TestStatusHealthWithoutProvider(t *testing.T) {
	tb := newTestBot(t)
	user := tb.fake.NewUser("admin")
	status := discordgo.ApplicationCommandInteractionData{Name: "kioku", Options: []*discordgo.ApplicationCommandInteractionDataOption{
		{Name: "status", Type: discordgo.ApplicationCommandOptionSubCommand}}}
	msg, _ := tb.interact(t, tb.fake.SlashCommand("500", "501", user, discordgo.PermissionManageGuild, status))
	var areas, score string
	for _, f := range msg.Embeds[0].Fields {
		switch f.Name {
		case "Health by area":
			areas = f.Value
		case "Health score":
			score = f.Value
		}
	}
	if score != "100/100: healthy" || !strings.Contains(areas, "provider not known") {
		t.Fatalf("score %q, areas %q", score, areas)
	}
}
