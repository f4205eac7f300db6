package storetest

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// testLearningControls: a turn said where kioku does not learn is kept for replies but
// never read by extraction; switching a channel off marks its (and its threads') turns not
// extracted yet and takes back its running extraction; switching on applies to new turns;
// the per-channel choices merge and survive a save of the other settings.
func testLearningControls(t *testing.T, open func(*testing.T) Stores) {
	appendTurn := func(t *testing.T, s Stores, channel, role, text string, noLearning bool) int64 {
		t.Helper()
		id, err := s.Transcripts.AppendTurn(t.Context(), memory.Turn{GuildID: "g1", ChannelID: channel, UserID: "u1",
			Role: role, Content: text, NoLearning: noLearning})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	extractable := func(t *testing.T, s Stores, channel string) string {
		t.Helper()
		turns, err := s.Transcripts.TurnsAfter(t.Context(), "g1", channel, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return turnTexts(turns)
	}

	t.Run("UnlearnableTurnsAreForRepliesOnly", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		appendTurn(t, s, "c1", memory.RoleUser, "learn this", false)
		appendTurn(t, s, "c1", memory.RoleUser, "not this", true)
		appendTurn(t, s, "c1", memory.RoleAssistant, "nor my answer", true)
		turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "u1", 10)
		if err != nil {
			t.Fatal(err)
		}
		if turnTexts(turns) != "learn this|not this|nor my answer" {
			t.Fatalf("reply read %q, want every turn", turnTexts(turns))
		}
		if turns[0].NoLearning || !turns[1].NoLearning || !turns[2].NoLearning {
			t.Errorf("marks read back: %v %v %v, want false true true", turns[0].NoLearning, turns[1].NoLearning, turns[2].NoLearning)
		}
		if got := extractable(t, s, "c1"); got != "learn this" {
			t.Errorf("extraction read %q, want only the learnable turn", got)
		}
		b, err := s.Transcripts.ExtractionBacklog(ctx, "g1", "c1")
		if err != nil || b.Turns != 1 || b.UserTurns != 1 {
			t.Errorf("backlog %+v %v, want the one learnable turn", b, err)
		}
		appendTurn(t, s, "c2", memory.RoleUser, "only unlearnable", true)
		if b, err := s.Transcripts.ExtractionBacklog(ctx, "g1", "c2"); err != nil || b.Turns != 0 || b.UserTurns != 0 {
			t.Errorf("backlog of a channel with only unlearnable turns: %+v %v, want none", b, err)
		}
	})

	t.Run("SwitchingOffStopsPendingExtraction", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		appendTurn(t, s, "vent", memory.RoleUser, "I am so tired of work", false)
		appendTurn(t, s, "vent", memory.RoleAssistant, "That sounds hard", false)
		appendTurn(t, s, "vent-thread", memory.RoleUser, "in the thread", false)
		appendTurn(t, s, "general", memory.RoleUser, "raid on Friday", false)
		job, _, err := s.Jobs.Enqueue(ctx, "extract", "g1/vent", map[string]string{"guild_id": "g1", "channel_id": "vent"},
			memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		leased := mustLease(t, s, "worker-1")
		if leased.ID != job {
			t.Fatalf("leased job %d, want %d", leased.ID, job)
		}

		marked, err := s.Settings.SetChannelLearning(ctx, "g1", "vent", false, "vent-thread")
		if err != nil || marked != 3 {
			t.Fatalf("switch off: %d turns marked, %v; want the channel's 2 and its thread's 1", marked, err)
		}
		for _, ch := range []string{"vent", "vent-thread"} {
			if got := extractable(t, s, ch); got != "" {
				t.Errorf("extraction still reads %q in %s after it was switched off", got, ch)
			}
		}
		if turns, _ := s.Transcripts.RecentTurns(ctx, "g1", "vent", "u1", 10); len(turns) != 2 {
			t.Errorf("replies read %d turns of the switched-off channel, want 2 (raw-first holds)", len(turns))
		}
		if got := extractable(t, s, "general"); got != "raid on Friday" {
			t.Errorf("another channel's extraction reads %q, want it untouched", got)
		}
		// The job that was reading the channel lost its lease: what it read is never committed.
		if err := s.Jobs.Complete(ctx, leased.ID, "worker-1"); !errors.Is(err, memory.ErrLeaseLost) {
			t.Errorf("completing the job running when the channel was switched off: %v, want ErrLeaseLost", err)
		}
		if j := mustJob(t, s, job); j.State != memory.JobQueued {
			t.Errorf("the channel's job is %s, want queued again", j.State)
		}

		// Choices merge: switching another channel keeps this one, and a save of the other
		// settings (read before) changes neither.
		if _, err := s.Settings.SetChannelLearning(ctx, "g1", "nsfw-art", true); err != nil {
			t.Fatal(err)
		}
		if err := s.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g1", SelfTeaching: true}); err != nil {
			t.Fatal(err)
		}
		gs, err := s.Settings.GuildSettings(ctx, "g1")
		if want := map[string]bool{"vent": false, "nsfw-art": true}; err != nil || !maps.Equal(gs.LearningChannels, want) || !gs.SelfTeaching {
			t.Errorf("settings %+v, %v; want learning %v and self-teaching on", gs, err, want)
		}
		if other, _ := s.Settings.GuildSettings(ctx, "g2"); len(other.LearningChannels) != 0 {
			t.Errorf("another guild has learning choices %v", other.LearningChannels)
		}

		// Switching back on applies to what is said from then on.
		s.Clock.Advance(time.Second)
		if n, err := s.Settings.SetChannelLearning(ctx, "g1", "vent", true); err != nil || n != 0 {
			t.Fatalf("switch on: %d, %v", n, err)
		}
		appendTurn(t, s, "vent", memory.RoleUser, "better now", false)
		if got := extractable(t, s, "vent"); got != "better now" {
			t.Errorf("extraction after switching on reads %q, want only the new turn", got)
		}
		if gs, _ := s.Settings.GuildSettings(ctx, "g1"); !gs.LearningChannels["vent"] {
			t.Errorf("learning choices %v, want vent on", gs.LearningChannels)
		}
		if _, err := s.Settings.SetChannelLearning(ctx, "", "vent", false); err == nil {
			t.Error("learning was switched without a guild")
		}
	})
}
