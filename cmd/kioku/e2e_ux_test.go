package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// TestRunNoticeButtons: a memory the model saves in a conversation is shown with Undo and
// Edit buttons that work through the gateway, for the member the memory concerns only;
// the id suggestions of /memory come the same way.
func TestRunNoticeButtons(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	const aliceDM, bobDM = "200000000000000031", "200000000000000032"
	h.ai.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
			Arguments: `{"memory_content":"Alice's bike is red","memory_scope":"target_user"}`}),
		fakeopenai.Text("Noted."),
	)
	sent := h.chat(h.fake.DMMessage(aliceDM, alice, "remember that my bike is red"))
	mustContain(t, "reply", sent.Content, "📌 Remembered (personal) #1")
	var ids []string
	for _, c := range sent.Components {
		for _, b := range c.(*discordgo.ActionsRow).Components {
			ids = append(ids, b.(*discordgo.Button).CustomID)
		}
	}
	if !slices.Equal(ids, []string{"kioku:undo:p:1:1", "kioku:edit:p:1:1"}) {
		t.Fatalf("notice buttons = %q", ids)
	}
	notice, ok := h.fake.StoredMessage(sent.ID)
	if !ok {
		t.Fatal("the reply is not stored")
	}
	click := func(user *discordgo.User, channel, customID string) reply {
		return h.interact(h.fake.ComponentClick("", channel, user, 0, customID, notice))
	}

	// Bob (who could only have the button by a forged payload) reads "not found".
	r := click(bob, bobDM, "kioku:undo:p:1:1")
	if r.Msg.Content != "There is no memory #1 that you can see here." || !r.Ephemeral {
		t.Errorf("bob's Undo answered %q (ephemeral %v)", r.Msg.Content, r.Ephemeral)
	}

	// Alice edits through the form.
	i := h.fake.ComponentClick("", aliceDM, alice, 0, "kioku:edit:p:1:1", notice)
	mark := h.fake.Mark()
	if err := h.fake.DispatchInteraction(i); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitForSince(h.ctx(), mark, func(req fakediscord.Request) bool { return strings.Contains(req.Path, i.Token) }); err != nil {
		t.Fatal(err)
	}
	resps := h.fake.InteractionResponses()
	modal := resps[len(resps)-1]
	if modal.Type != discordgo.InteractionResponseModal || modal.CustomID != "kioku:editm:p:1:1" {
		t.Fatalf("Edit answered %d %q", modal.Type, modal.CustomID)
	}
	r = h.interact(h.fake.ModalSubmit("", aliceDM, alice, 0, "kioku:editm:p:1:1",
		map[string]string{"content": "Alice's bike is blue", "type": "fact", "tags": ""}, notice))
	mustContain(t, "edit submit", r.Msg.Content, "✏️ Updated (personal) #1, now version 2: Alice's bike is blue")

	// The notice's Undo now names a version the memory has left.
	r = click(alice, aliceDM, "kioku:undo:p:1:1")
	mustContain(t, "stale Undo", r.Msg.Content, "changed since this notice")

	// The edit's own Undo puts the red bike back.
	r = click(alice, aliceDM, "kioku:undo:p:1:2")
	mustContain(t, "Undo of the edit", r.Msg.Content, "Undid the edit of #1: now version 3: Alice's bike is red")

	// Suggestions while typing an id.
	ac := h.fake.Autocomplete("", aliceDM, alice, 0, slash("memory", "show",
		&discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: "bike", Focused: true}))
	mark = h.fake.Mark()
	if err := h.fake.DispatchInteraction(ac); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitForSince(h.ctx(), mark, func(req fakediscord.Request) bool { return strings.Contains(req.Path, ac.Token) }); err != nil {
		t.Fatal(err)
	}
	resps = h.fake.InteractionResponses()
	got := resps[len(resps)-1]
	if got.Type != discordgo.InteractionApplicationCommandAutocompleteResult || len(got.Choices) != 1 ||
		got.Choices[0].Name != "#1 · Alice's bike is red" || fmt.Sprint(got.Choices[0].Value) != "1" {
		t.Errorf("suggestions = %d %+v", got.Type, got.Choices)
	}
	// Bob gets none of alice's.
	ac = h.fake.Autocomplete("", bobDM, bob, 0, slash("memory", "show",
		&discordgo.ApplicationCommandInteractionDataOption{Name: "id", Type: discordgo.ApplicationCommandOptionInteger, Value: "", Focused: true}))
	mark = h.fake.Mark()
	if err := h.fake.DispatchInteraction(ac); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitForSince(h.ctx(), mark, func(req fakediscord.Request) bool { return strings.Contains(req.Path, ac.Token) }); err != nil {
		t.Fatal(err)
	}
	resps = h.fake.InteractionResponses()
	if got := resps[len(resps)-1]; len(got.Choices) != 0 {
		t.Errorf("bob was offered %+v", got.Choices)
	}
}
