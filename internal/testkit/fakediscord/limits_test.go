package fakediscord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// TestAutocompleteAndModalRoundTrip sends an autocomplete request and a modal submit
// through the gateway to a real session, answers them, and reads back what Discord got.
func TestAutocompleteAndModalRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	alice := h.fake.NewUser("alice")

	ac := h.fake.Autocomplete("10", "50", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "memory",
		Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "show", Type: discordgo.ApplicationCommandOptionSubCommand,
			Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "id", Type: discordgo.ApplicationCommandOptionInteger,
				Value: "clim", Focused: true}}}}})
	if err := h.fake.DispatchInteraction(ac); err != nil {
		t.Fatal(err)
	}
	i := receive(t, h.interactions).Interaction
	if i.Type != discordgo.InteractionApplicationCommandAutocomplete {
		t.Fatalf("type %d", i.Type)
	}
	opt := i.ApplicationCommandData().Options[0].Options[0]
	if !opt.Focused || opt.Value != "clim" {
		t.Errorf("focused option = %+v", opt)
	}
	choices := []*discordgo.ApplicationCommandOptionChoice{{Name: "#1 · climbing", Value: 1}}
	if err := h.session.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices}}); err != nil {
		t.Fatal(err)
	}
	resps := h.fake.InteractionResponses()
	if r := resps[len(resps)-1]; len(r.Choices) != 1 || r.Choices[0].Name != "#1 · climbing" || r.Choices[0].Value != float64(1) {
		t.Errorf("recorded choices %+v", r.Choices)
	}

	ms := h.fake.ModalSubmit("10", "50", alice, 0, "kioku:addm:s:0", map[string]string{"content": "line one\nline two", "tags": "a, b"}, nil)
	if err := h.fake.DispatchInteraction(ms); err != nil {
		t.Fatal(err)
	}
	i = receive(t, h.interactions).Interaction
	data := i.ModalSubmitData()
	if data.CustomID != "kioku:addm:s:0" || len(data.Components) != 2 {
		t.Fatalf("modal data = %+v", data)
	}
	var got []string
	for _, c := range data.Components {
		in := c.(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput)
		got = append(got, in.CustomID+"="+in.Value)
	}
	if strings.Join(got, "|") != "content=line one\nline two|tags=a, b" {
		t.Errorf("modal values = %q", got)
	}
}

// TestDiscordLimitsAreEnforced checks that the fake refuses what Discord refuses.
func TestDiscordLimitsAreEnforced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	alice := h.fake.NewUser("alice")
	respond := func(r *discordgo.InteractionResponse) error {
		i := h.fake.SlashCommand("10", "50", alice, 0, discordgo.ApplicationCommandInteractionData{Name: "memory"})
		return h.session.InteractionRespond(i, r)
	}
	choices := func(n, nameLen int) []*discordgo.ApplicationCommandOptionChoice {
		var out []*discordgo.ApplicationCommandOptionChoice
		for i := range n {
			out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: strings.Repeat("あ", nameLen), Value: i})
		}
		return out
	}
	rows := func(n int) []discordgo.MessageComponent {
		var out []discordgo.MessageComponent
		for i := range n {
			out = append(out, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.Button{Label: "b", Style: discordgo.SecondaryButton, CustomID: fmt.Sprint("b", i)}}})
		}
		return out
	}
	fields := func(n, size int) []*discordgo.MessageEmbedField {
		var out []*discordgo.MessageEmbedField
		for range n {
			out = append(out, &discordgo.MessageEmbedField{Name: "f", Value: strings.Repeat("v", size)})
		}
		return out
	}
	auto := discordgo.InteractionApplicationCommandAutocompleteResult
	msg := discordgo.InteractionResponseChannelMessageWithSource
	for _, c := range []struct {
		name string
		resp *discordgo.InteractionResponse
		ok   bool
	}{
		{"25Choices", &discordgo.InteractionResponse{Type: auto, Data: &discordgo.InteractionResponseData{Choices: choices(25, 100)}}, true},
		{"26Choices", &discordgo.InteractionResponse{Type: auto, Data: &discordgo.InteractionResponseData{Choices: choices(26, 10)}}, false},
		{"101CharacterName", &discordgo.InteractionResponse{Type: auto, Data: &discordgo.InteractionResponseData{Choices: choices(1, 101)}}, false},
		{"5Rows", &discordgo.InteractionResponse{Type: msg, Data: &discordgo.InteractionResponseData{Content: "x", Components: rows(5)}}, true},
		{"6Rows", &discordgo.InteractionResponse{Type: msg, Data: &discordgo.InteractionResponseData{Content: "x", Components: rows(6)}}, false},
		{"25Fields", &discordgo.InteractionResponse{Type: msg, Data: &discordgo.InteractionResponseData{
			Embeds: []*discordgo.MessageEmbed{{Fields: fields(25, 200)}}}}, true},
		{"26Fields", &discordgo.InteractionResponse{Type: msg, Data: &discordgo.InteractionResponseData{
			Embeds: []*discordgo.MessageEmbed{{Fields: fields(26, 1)}}}}, false},
		{"6001Characters", &discordgo.InteractionResponse{Type: msg, Data: &discordgo.InteractionResponseData{
			Embeds: []*discordgo.MessageEmbed{{Description: strings.Repeat("d", 4000), Fields: fields(2, 1000)}}}}, false},
		{"LongModalTitle", &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
			CustomID: "m", Title: strings.Repeat("t", 46), Components: []discordgo.MessageComponent{}}}, false},
	} {
		err := respond(c.resp)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok %v", c.name, err, c.ok)
		}
	}
}
