package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// TestLearningControls: extraction never reads a turn said where kioku does not learn. A
// channel with only such turns schedules nothing and its job writes nothing without asking
// the model; in a channel whose learning changed, the model reads only the learnable turns;
// switching a channel off leaves its queued job nothing to read.
func TestLearningControls(t *testing.T) {
	unlearnable := func(e *env, channel, user, name, text string) {
		e.t.Helper()
		e.sayWith(memory.Turn{GuildID: "g1", ChannelID: channel, UserID: user, AuthorName: name, Content: text, NoLearning: true})
	}

	t.Run("OnlyUnlearnableTurnsWriteNothing", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		unlearnable(e, "nsfw", "u1", "Alice", "Remember that I prefer to keep this private")
		unlearnable(e, "nsfw", "u2", "Bob", "We decided the meeting is on Mondays")
		if jobs := e.jobs(); len(jobs) != 0 {
			t.Fatalf("%d jobs scheduled for turns extraction may not read", len(jobs))
		}
		// Even a job that exists (scheduled before, or by hand) reads nothing.
		if _, _, err := e.store.Jobs.Enqueue(t.Context(), pipeline.KindExtract, pipeline.ExtractionKey("g1", "nsfw"),
			map[string]string{"guild_id": "g1", "channel_id": "nsfw"}, memory.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("tick %+v\n%s", r, e.logs)
		}
		if n := len(e.fake.ChatRequests()); n != 0 {
			t.Errorf("%d model calls for a channel that does not learn", n)
		}
		for _, owner := range []memory.Owner{memory.ServerOwner("g1"), memory.PersonalOwner("u1"), memory.PersonalOwner("u2")} {
			if got := e.memories(owner); len(got) != 0 {
				t.Errorf("memories of %s written from unlearnable turns: %v", owner.Key(), got)
			}
		}
	})

	t.Run("OnlyLearnableTurnsReachTheModel", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		e.say("g1", "c1", "u1", "Alice", "I prefer green tea over coffee")
		unlearnable(e, "c1", "u2", "Bob", "BOBSECRET I prefer to vent here")
		e.say("g1", "c1", "u2", "Bob", "The raid is on Friday evenings")
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("tick %+v\n%s", r, e.logs)
		}
		reqs := e.fake.ChatRequests()
		if len(reqs) == 0 || !isExtraction(reqs[0]) {
			t.Fatalf("no extraction request")
		}
		for _, r := range reqs {
			if strings.Contains(r.Messages[len(r.Messages)-1].Content, "BOBSECRET") {
				t.Fatal("an unlearnable turn reached the model")
			}
		}
		if got := records(reqs[0]); len(got) != 2 {
			t.Errorf("the model read %d records, want the 2 learnable turns", len(got))
		}
		if got := e.contents(memory.PersonalOwner("u2")); len(got) != 0 {
			t.Errorf("Bob's personal memories %q, want none from his unlearnable turn", got)
		}
	})

	t.Run("SwitchingOffEmptiesTheQueuedJob", func(t *testing.T) {
		e := newEnv(t, pipeline.Config{})
		e.say("g1", "vent", "u1", "Alice", decisive)
		e.say("g1", "vent", "u1", "Alice", "I prefer to never work weekends")
		if jobs := e.jobs(); len(jobs) != 1 {
			t.Fatalf("%d jobs, want the channel's one", len(jobs))
		}
		if n, err := e.store.Settings.SetChannelLearning(t.Context(), "g1", "vent", false); err != nil || n != 2 {
			t.Fatalf("switch off: %d, %v", n, err)
		}
		if r := e.tick(); r.Done != 1 {
			t.Fatalf("tick %+v\n%s", r, e.logs)
		}
		if n := len(e.fake.ChatRequests()); n != 0 {
			t.Errorf("%d model calls after the channel was switched off", n)
		}
		if got := e.contents(memory.ServerOwner("g1")); len(got) != 0 {
			t.Errorf("server memories %q written after the channel was switched off", got)
		}
		if got := e.contents(memory.PersonalOwner("u1")); !slices.Equal(got, nil) {
			t.Errorf("personal memories %q written after the channel was switched off", got)
		}
	})
}
