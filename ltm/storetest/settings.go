package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// testSettings: users and guilds start with the defaults, settings round-trip, and a
// stricter privacy level takes back what unfinished pipeline work holds.
func testSettings(t *testing.T, open func(*testing.T) Stores) {
	t.Run("UserDefaults", func(t *testing.T) {
		s := open(t)
		us, err := s.Settings.UserSettings(t.Context(), "u1")
		if err != nil || us.UserID != "u1" || us.Privacy != memory.PrivacyNormal || us.CrossServer {
			t.Fatalf("defaults %+v %v", us, err)
		}
	})
	t.Run("UserRoundTrip", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		if err := s.Settings.SetPrivacy(ctx, "u1", memory.PrivacyPartial); err != nil {
			t.Fatal(err)
		}
		if err := s.Settings.SetCrossServer(ctx, "u1", true); err != nil {
			t.Fatal(err)
		}
		us, err := s.Settings.UserSettings(ctx, "u1")
		if err != nil || us.Privacy != memory.PrivacyPartial || !us.CrossServer || !us.UpdatedAt.Equal(s.Clock.Now()) {
			t.Fatalf("settings %+v %v", us, err)
		}
		// Each setter leaves the other setting alone.
		if err := s.Settings.SetPrivacy(ctx, "u1", memory.PrivacyNormal); err != nil {
			t.Fatal(err)
		}
		if us, _ := s.Settings.UserSettings(ctx, "u1"); us.Privacy != memory.PrivacyNormal || !us.CrossServer {
			t.Fatalf("after setting privacy back: %+v", us)
		}
		if other, _ := s.Settings.UserSettings(ctx, "u2"); other.Privacy != memory.PrivacyNormal || other.CrossServer {
			t.Fatalf("another user's settings changed: %+v", other)
		}
	})
	t.Run("EveryPrivacyLevel", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		for _, p := range []memory.Privacy{memory.PrivacyFull, memory.PrivacyPartial, memory.PrivacyNormal} {
			if err := s.Settings.SetPrivacy(ctx, "u1", p); err != nil {
				t.Fatal(err)
			}
			if us, _ := s.Settings.UserSettings(ctx, "u1"); us.Privacy != p {
				t.Fatalf("privacy %q read back as %q", p, us.Privacy)
			}
		}
		wantCode(t, s.Settings.SetPrivacy(ctx, "u1", "secret"), memory.EINVALID)
	})
	t.Run("ManyUsersAtOnce", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		var ids []string
		for i := range 700 {
			ids = append(ids, fmt.Sprintf("u%04d", i))
		}
		for _, id := range []string{"u0000", "u0699"} {
			if err := s.Settings.SetPrivacy(ctx, id, memory.PrivacyFull); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Settings.UsersSettings(ctx, append(ids, "u0000"))
		if err != nil || len(got) != len(ids) {
			t.Fatalf("%d settings (%v), want %d", len(got), err, len(ids))
		}
		if got["u0699"].Privacy != memory.PrivacyFull || got["u0000"].Privacy != memory.PrivacyFull ||
			got["u0001"].Privacy != memory.PrivacyNormal || got["u0001"].UserID != "u0001" {
			t.Fatalf("u0699 %+v, u0000 %+v, u0001 %+v", got["u0699"], got["u0000"], got["u0001"])
		}
	})
	t.Run("StricterPrivacyTakesBackPipelineWork", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		queued, _, err := s.Jobs.Enqueue(ctx, "extract", "g/queued", checkpoint("g1", "u1 likes tea"),
			memory.EnqueueOptions{RunAfter: s.Clock.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Settings.SetPrivacy(ctx, "u1", memory.PrivacyNormal); err != nil {
			t.Fatal(err)
		}
		if !payloadKeys(t, mustJob(t, s, queued))["checkpoint"] {
			t.Fatal("setting privacy to normal cleared a checkpoint")
		}
		mustEnqueue(t, s, "extract", "running", memory.EnqueueOptions{})
		running := mustLease(t, s, "w")
		if err := s.Settings.SetPrivacy(ctx, "u1", memory.PrivacyPartial); err != nil {
			t.Fatal(err)
		}
		if payloadKeys(t, mustJob(t, s, queued))["checkpoint"] {
			t.Error("a queued job kept its checkpoint after a switch to partial privacy")
		}
		if err := s.Jobs.Heartbeat(ctx, running.ID, "w", time.Minute, nil); !errors.Is(err, memory.ErrLeaseLost) {
			t.Errorf("a running job kept its lease after a switch to partial privacy: %v", err)
		}
		if got := mustJob(t, s, running.ID); got.State != memory.JobQueued || got.Attempts != 0 {
			t.Errorf("the running job after the switch: %+v, want queued without a spent attempt", got)
		}
	})
	t.Run("GuildDefaultsAndRoundTrip", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		gs, err := s.Settings.GuildSettings(ctx, "g1")
		if err != nil || gs.GuildID != "g1" || gs.SelfTeaching || gs.PipelineMode != memory.PipelineFull ||
			len(gs.AutoReplyChannels) != 0 || gs.Persona != "" || gs.EditorRoleID != "" || gs.Language != memory.LanguageAuto {
			t.Fatalf("guild defaults %+v %v", gs, err)
		}
		gs.SelfTeaching, gs.AutoReplyChannels, gs.Persona = true, []string{"c1", "c2"}, "You are a cheerful librarian."
		gs.PipelineMode, gs.EditorRoleID, gs.Language = memory.PipelineShadow, "role-1", "ja"
		if err := s.Settings.SaveGuildSettings(ctx, gs); err != nil {
			t.Fatal(err)
		}
		got, err := s.Settings.GuildSettings(ctx, "g1")
		if err != nil || !got.SelfTeaching || !slices.Equal(got.AutoReplyChannels, gs.AutoReplyChannels) || got.Persona != gs.Persona ||
			got.PipelineMode != memory.PipelineShadow || got.EditorRoleID != "role-1" || got.Language != "ja" ||
			!got.UpdatedAt.Equal(s.Clock.Now()) {
			t.Fatalf("guild settings %+v %v", got, err)
		}
		if other, _ := s.Settings.GuildSettings(ctx, "g2"); other.SelfTeaching || other.Persona != "" {
			t.Fatalf("another guild's settings changed: %+v", other)
		}
		gs.PipelineMode, gs.Language = "", ""
		if err := s.Settings.SaveGuildSettings(ctx, gs); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Settings.GuildSettings(ctx, "g1"); got.PipelineMode != memory.PipelineFull || got.Language != memory.LanguageAuto {
			t.Fatalf("an empty pipeline mode and language saved as %q, %q, want the defaults", got.PipelineMode, got.Language)
		}
	})
	t.Run("ErrInvalidGuildSettings", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		for name, gs := range map[string]memory.GuildSettings{
			"UnknownMode":  {GuildID: "g1", PipelineMode: "yolo"},
			"OperatorMode": {GuildID: "g1", PipelineMode: memory.PipelineFrozen},
			"LongPersona":  {GuildID: "g1", Persona: strings.Repeat("あ", 4001)},
			"Language":     {GuildID: "g1", Language: "fr"},
		} {
			if err := s.Settings.SaveGuildSettings(ctx, gs); memory.ErrorCode(err) != memory.EINVALID {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
		if gs, _ := s.Settings.GuildSettings(ctx, "g1"); gs.PipelineMode != memory.PipelineFull || gs.Persona != "" {
			t.Errorf("a refused save changed the settings: %+v", gs)
		}
	})
}
