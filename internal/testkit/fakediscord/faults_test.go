package fakediscord_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// TestRateLimitNext: the 429 carries Discord's retry_after, discordgo waits it out and
// sends the message again, and the channel holds it once.
func TestRateLimitNext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(f *fakediscord.Fake) {
		f.SetChannel(&discordgo.Channel{ID: "30", Type: discordgo.ChannelTypeGuildText, GuildID: "3"})
	})
	const retryAfter = 300 * time.Millisecond
	h.fake.RateLimitNext(1, fakediscord.Match("POST", "/channels/30/messages"), retryAfter)
	started := time.Now()
	if _, err := h.session.ChannelMessageSend("30", "hello"); err != nil {
		t.Fatalf("send after a 429: %v", err)
	}
	if waited := time.Since(started); waited < retryAfter {
		t.Errorf("the retry came after %v, before retry_after %v", waited, retryAfter)
	}
	var statuses []int
	for _, r := range h.fake.Requests() {
		if r.Method == "POST" && r.Path == "/channels/30/messages" {
			statuses = append(statuses, r.Status)
		}
	}
	if len(statuses) != 2 || statuses[0] != http.StatusTooManyRequests || statuses[1] != http.StatusOK {
		t.Errorf("message POSTs answered %v, want [429 200]", statuses)
	}
	if n := len(h.fake.Messages("30")); n != 1 {
		t.Errorf("%d messages in the channel, want 1", n)
	}
}

// TestDispatchWhileDroppedIsReplayed: events dispatched while the client is away are
// kept, and its RESUME gets each of them once; the events it had already seen
// are not sent again.
func TestDispatchWhileDroppedIsReplayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	seen := h.fake.GuildMessage("900", "901", h.fake.NewUser("a"), "before the drop")
	if err := h.fake.DispatchMessage(seen); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, h.messages); got.ID != seen.ID {
		t.Fatalf("got %s, want %s", got.ID, seen.ID)
	}
	if err := h.fake.DropGateway(4000); err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, text := range []string{"during the drop 1", "during the drop 2"} {
		m := h.fake.GuildMessage("900", "901", h.fake.NewUser("b"), text)
		if err := h.fake.DispatchMessage(m); err != nil {
			t.Fatalf("dispatch while dropped: %v", err)
		}
		missed = append(missed, m.ID)
	}
	if err := h.fake.WaitUntil(ctx(t), func() bool { return h.fake.Resumes() == 1 }); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitReady(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// discordgo runs each handler in a goroutine of its own, so the two replayed events
	// may reach the handler in either order; each must arrive once.
	var got []string
	for range missed {
		got = append(got, receive(t, h.messages).ID)
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(missed)); !slices.Equal(got, want) {
		t.Errorf("replayed %v, want %v", got, want)
	}
	// The gateway is read in order: the next message is the probe, or a duplicate.
	probe := h.fake.GuildMessage("900", "901", h.fake.NewUser("c"), "after the resume")
	if err := h.fake.DispatchMessage(probe); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, h.messages); got.ID != probe.ID {
		t.Errorf("message %s (%q) delivered again", got.ID, got.Content)
	}
	if n := h.fake.Replayed(); n != 2 {
		t.Errorf("%d events replayed, want the 2 dispatched while dropped", n)
	}
}
