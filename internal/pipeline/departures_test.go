package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestRetentionPurgesDepartedGuilds: the retention task deletes the data of a server that
// removed the bot once its grace period has passed, and not before; other servers stay.
func TestRetentionPurgesDepartedGuilds(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx := t.Context()
	gone := testkit.MustRemember(t, e.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Raids are on Friday"})
	kept := testkit.MustRemember(t, e.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Standup at nine"})
	if _, err := e.store.Guilds.RecordDeparture(ctx, "g1", time.Hour); err != nil {
		t.Fatal(err)
	}
	exists := func(m *memory.Memory) bool {
		_, n, err := e.store.Memories.List(ctx, m.Owner(), memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	if err := e.p.RunTask(ctx, pipeline.TaskRetention); err != nil {
		t.Fatal(err)
	}
	if !exists(gone) {
		t.Fatal("purged during the grace period")
	}
	e.clock.Advance(2 * time.Hour)
	if err := e.p.RunTask(ctx, pipeline.TaskRetention); err != nil {
		t.Fatal(err)
	}
	if exists(gone) {
		t.Error("the departed server's memory outlived its grace period")
	}
	if !exists(kept) {
		t.Error("another server's memory was purged")
	}
	runs, err := e.store.Jobs.TaskRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Name == pipeline.TaskRetention && (!r.OK || !strings.Contains(r.Detail, "departed_guilds=1")) {
			t.Errorf("retention run %+v, want it to report the purged server", r)
		}
	}
}
