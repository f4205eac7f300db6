package memory_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

func TestPipelineModes(t *testing.T) {
	if len(memory.GuildPipelineModes) != 4 {
		t.Errorf("GuildPipelineModes lists %d modes, want the 4 /kioku config offers", len(memory.GuildPipelineModes))
	}
	for in, want := range map[string]memory.PipelineMode{"full": memory.PipelineFull, "Controlled": memory.PipelineControlled,
		"SHADOW": memory.PipelineShadow, "frozen": memory.PipelineFrozen, "off": memory.PipelineOff} {
		if got, err := memory.ParsePipelineMode(in); err != nil || got != want {
			t.Errorf("ParsePipelineMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := memory.ParsePipelineMode("auto"); memory.ErrorCode(err) != memory.EINVALID {
		t.Errorf("ParsePipelineMode(auto): %v, want an invalid-input error", err)
	}
	t.Run("Guild", func(t *testing.T) {
		if got, err := memory.PipelineMode("").ValidateGuild(); err != nil || got != memory.PipelineFull {
			t.Errorf("empty guild mode = %q, %v; want full", got, err)
		}
		if _, err := memory.PipelineFrozen.ValidateGuild(); memory.ErrorCode(err) != memory.EINVALID {
			t.Errorf("a guild chose frozen: %v", err)
		}
	})
}

func TestActorMembers(t *testing.T) {
	if got := memory.UserActor("u1").UserID(); got != "u1" {
		t.Errorf("UserActor(u1).UserID() = %q", got)
	}
	if got := memory.ModelActor("u1").ModelUserID(); got != "u1" {
		t.Errorf("ModelActor(u1).ModelUserID() = %q", got)
	}
	if memory.ActorPipeline.UserID() != "" || memory.UserActor("u1").ModelUserID() != "" {
		t.Error("a fixed or user actor named a member it does not hold")
	}
}
