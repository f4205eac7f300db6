package bot_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
)

// panelIDs lists the custom ids of the select menus in a message's components.
func panelIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var doc struct {
		Data struct {
			Components []struct {
				Type       int `json:"type"`
				Components []struct {
					Type     int    `json:"type"`
					CustomID string `json:"custom_id"`
				} `json:"components"`
			} `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, row := range doc.Data.Components {
		for _, c := range row.Components {
			ids = append(ids, c.CustomID)
		}
	}
	return ids
}

// callbackJSON is the JSON body of the interaction callback for i.
func callbackJSON(t *testing.T, f *fakediscord.Fake, i *discordgo.Interaction) json.RawMessage {
	t.Helper()
	for _, r := range f.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/"+i.Token+"/callback") {
			return r.JSON
		}
	}
	t.Fatalf("no callback for interaction %s", i.ID)
	return nil
}

// TestConfigPanel: /kioku config opens a panel with one select menu per choice setting;
// a manager's choice saves it and redraws the panel; a member without Manage Server who
// presses the panel (opened by someone else) is refused and nothing changes; crafted
// custom ids and values are refused too.
func TestConfigPanel(t *testing.T) {
	tb := newTestBot(t)
	admin, member := tb.fake.NewUser("admin"), tb.fake.NewUser("member")
	const guild, channel = "720", "721"
	ctx := context.Background()

	open := tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, slashData("kioku", "config"))
	msg, ephemeral := tb.interact(t, open)
	if !ephemeral {
		t.Error("the settings panel is not ephemeral")
	}
	raw := callbackJSON(t, tb.fake, open)
	assertGolden(t, "config.en.json", raw)
	ids := panelIDs(t, raw)
	want := []string{"cfg:set:language", "cfg:set:pipeline_mode", "cfg:set:self_teaching", "cfg:set:editor_role", "cfg:set:auto_reply"}
	if !slices.Equal(ids, want) {
		t.Fatalf("panel menus = %v, want %v", ids, want)
	}
	if len(msg.Components) > 5 {
		t.Errorf("%d action rows, Discord allows 5", len(msg.Components))
	}
	panel := &discordgo.Message{ID: tb.fake.NewSnowflake(), ChannelID: channel, GuildID: guild, Author: tb.fake.BotUser()}

	settings := func() memory.GuildSettings {
		t.Helper()
		gs, err := tb.store.Settings.GuildSettings(ctx, guild)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	press := func(user *discordgo.User, perms int64, id string, kind discordgo.ComponentType, values ...string) (*fakediscord.InteractionResponse, *discordgo.Interaction) {
		t.Helper()
		i := tb.fake.ComponentSelect(guild, channel, user, perms, id, kind, values, panel)
		tb.bot.HandleInteraction(tb.session, &discordgo.InteractionCreate{Interaction: i})
		for _, r := range tb.fake.InteractionResponses() {
			if r.Token == i.Token {
				return r, i
			}
		}
		t.Fatalf("press of %s was not answered", id)
		return nil, nil
	}

	// A manager's choices are saved, each redrawing the panel in place.
	r, _ := press(admin, discordgo.PermissionManageGuild, "cfg:set:pipeline_mode", discordgo.SelectMenuComponent, "shadow")
	if r.Type != discordgo.InteractionResponseUpdateMessage || !strings.HasPrefix(r.Data.Content, "Saved.") {
		t.Errorf("manager's choice answered %v %+v", r.Type, r.Data)
	}
	press(admin, discordgo.PermissionAdministrator, "cfg:set:language", discordgo.SelectMenuComponent, "ja")
	press(admin, discordgo.PermissionManageGuild, "cfg:set:self_teaching", discordgo.SelectMenuComponent, "on")
	press(admin, discordgo.PermissionManageGuild, "cfg:set:editor_role", discordgo.RoleSelectMenuComponent, "7001")
	press(admin, discordgo.PermissionManageGuild, "cfg:set:auto_reply", discordgo.ChannelSelectMenuComponent, "721", "722")
	gs := settings()
	if gs.PipelineMode != memory.PipelineShadow || gs.Language != "ja" || !gs.SelfTeaching || gs.EditorRoleID != "7001" ||
		!slices.Equal(gs.AutoReplyChannels, []string{"721", "722"}) {
		t.Fatalf("settings after the manager's choices = %+v", gs)
	}

	// Everyone else is refused on every menu, and the message they pressed stays.
	for _, id := range want {
		r, i := press(member, 0, id, discordgo.SelectMenuComponent, "off")
		if r.Type != discordgo.InteractionResponseChannelMessageWithSource || r.Data.Flags&discordgo.MessageFlagsEphemeral == 0 ||
			!strings.Contains(r.Data.Content, "Manage Server") {
			t.Errorf("member pressing %s answered %v %+v, want an ephemeral refusal", id, r.Type, r.Data)
		}
		if i.Member.Permissions != 0 {
			t.Fatal("the member was given permissions")
		}
	}
	// An editor-role member is not a manager either.
	r, _ = press(member, 0, "cfg:set:editor_role", discordgo.RoleSelectMenuComponent)
	if !strings.Contains(r.Data.Content, "Manage Server") {
		t.Errorf("editor role reset by a member answered %q", r.Data.Content)
	}
	if got := settings(); !settingsEqual(got, gs) {
		t.Errorf("refused presses changed the settings: %+v, was %+v", got, gs)
	}

	// Crafted presses by a manager: unknown setting, bad values, two values for one.
	for _, c := range []struct {
		id     string
		values []string
	}{
		{"cfg:set:persona", []string{"evil"}},
		{"cfg:set:language", []string{"fr"}},
		{"cfg:set:pipeline_mode", []string{"frozen"}},
		{"cfg:set:self_teaching", []string{"on", "off"}},
		{"cfg:set:editor_role", []string{"@everyone"}},
		{"cfg:set:auto_reply", []string{"721", "<#1>"}},
	} {
		r, _ := press(admin, discordgo.PermissionManageGuild, c.id, discordgo.SelectMenuComponent, c.values...)
		if r.Data == nil || r.Data.Flags&discordgo.MessageFlagsEphemeral == 0 || r.Type != discordgo.InteractionResponseChannelMessageWithSource {
			t.Errorf("%s %v answered %v %+v, want an ephemeral refusal", c.id, c.values, r.Type, r.Data)
		}
	}
	if got := settings(); !settingsEqual(got, gs) {
		t.Errorf("crafted presses changed the settings: %+v, was %+v", got, gs)
	}

	// The panel speaks the presser's language.
	i := fakediscord.WithLocale(tb.fake.SlashCommand(guild, channel, admin, discordgo.PermissionManageGuild, slashData("kioku", "config")),
		discordgo.Japanese, "")
	msg, _ = tb.interact(t, i)
	if !strings.HasPrefix(msg.Content, "このサーバーでのkiokuの設定") || msg.Embeds[0].Title != "設定" {
		t.Errorf("Japanese panel = %q / %q", msg.Content, msg.Embeds[0].Title)
	}
}

func settingsEqual(a, b memory.GuildSettings) bool {
	return a.PipelineMode == b.PipelineMode && a.Language == b.Language && a.SelfTeaching == b.SelfTeaching &&
		a.EditorRoleID == b.EditorRoleID && slices.Equal(a.AutoReplyChannels, b.AutoReplyChannels) && a.Persona == b.Persona
}
