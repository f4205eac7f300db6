package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestRunPipeline: `kioku run` starts the background pipeline with the bot. A decision
// said in a DM is scheduled by the chat turn, extracted by the running worker with the
// pipeline model, stored as a personal memory, and /kioku status then shows the queue,
// the worker's last run and the model budget the extraction used.
func TestRunPipeline(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "full"})
	alice := h.fake.NewUser("alice")
	const fact = "Alice decided to raid on Fridays"
	h.ai.Default(func(req openai.ChatCompletionRequest) fakeopenai.Response {
		if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You extract") {
			b, _ := json.Marshal(map[string]any{"facts": []map[string]any{
				{"content": fact, "type": "decision", "confidence": 0.9, "scope": "personal", "subject": alice.ID}}})
			return fakeopenai.Text(string(b))
		}
		return fakeopenai.Text("Noted.")
	})
	if got := h.chat(h.fake.DMMessage("200000000000000031", alice, "We decided to raid on Fridays from now on")); got.Content != "Noted." {
		t.Fatalf("DM reply %q", got.Content)
	}

	store, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// The worker runs on its own schedule (every few seconds); wait for its result, bounded.
	var mem *memory.Memory
	waitFor(t, h, "the pipeline to store the extracted fact", func() bool {
		ms, _, err := store.Memories.List(context.Background(), memory.PersonalOwner(alice.ID), memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			mem = ms[0]
		}
		return mem != nil
	})
	if mem.Content != fact || mem.Source != memory.SourcePipeline {
		t.Fatalf("memory %+v, want the extracted fact from the pipeline", mem)
	}
	var extracted bool
	for _, r := range h.ai.ChatRequests() {
		if strings.HasPrefix(r.Messages[0].Content, "You extract") {
			extracted = true
		}
	}
	if !extracted {
		t.Fatal("no extraction request reached the model")
	}
	waitFor(t, h, "the worker's run to be recorded", func() bool {
		runs, err := store.Jobs.TaskRuns(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Name == pipeline.TaskWork {
				return true
			}
		}
		return false
	})

	r := h.command(guildA, channelA, alice, permMember, slash("kioku", "status"))
	mustContain(t, "/kioku status", r.Text(), "Background queue: 0 queued (0 due), 0 running, 0 failed",
		"Pipeline budget: 1 of 120 model calls in the last hour", "work: ok <t:", "Health: healthy")
	mustNotContain(t, "/kioku status for a member", r.Text(), "Health score")
	// A manager also sees the health score, with the provider as this process saw it.
	r = h.command(guildA, channelA, alice, permAdmin, slash("kioku", "status"))
	mustContain(t, "/kioku status for a manager", r.Text(), "Health score: 100/100: healthy",
		"Health by area: queue 100 · storage 100 · index 100 · provider 100 · mutations 100", "Top findings: none")
}

// waitFor polls cond until it holds, failing after a bound that is generous for a slow
// machine. It waits on background work whose timing the test does not control.
func waitFor(t *testing.T, h *e2e, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; kioku's log:\n%s", what, h.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDoctorPipelineAndRecall: doctor reports the pipeline's queue and last runs, turns
// dead jobs into a warning line (not a failure), and says plainly that recall is
// keyword-only when no embedding model is configured.
func TestDoctorPipelineAndRecall(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db}
	if code, out, stderr := runApp(t, env, "", "migrate"); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}

	code, out, stderr := runApp(t, env, "", "doctor", "--offline")
	if code != 0 {
		t.Fatalf("doctor on a fresh database: exit %d\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor", out, "ok    pipeline   mode full: 0 queued (0 due), 0 running, 0 dead; no task has run yet",
		"keyword-only recall: KIOKU_EMBED_MODEL is empty")
	mustNotContain(t, "doctor", out, "warn  pipeline")

	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := store.Jobs.Enqueue(ctx, pipeline.KindExtract, "g1/c1", map[string]string{"guild_id": "g1", "channel_id": "c1"}, memory.EnqueueOptions{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Jobs.Lease(ctx, "worker", nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if dead, err := store.Jobs.Fail(ctx, id, "worker", errors.New("provider returned 503"), time.Minute); err != nil || !dead {
		t.Fatalf("fail: dead %v, %v", dead, err)
	}
	now := time.Now()
	if err := store.Jobs.RecordRun(ctx, memory.TaskRun{Name: pipeline.TaskWork, StartedAt: now, FinishedAt: now, OK: true, Detail: "done=0"}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	env["KIOKU_EMBED_MODEL"] = "text-embedding-3-small"
	code, out, stderr = runApp(t, env, "", "doctor", "--offline")
	if code != 0 {
		t.Fatalf("dead jobs made doctor fail (exit %d); they are a warning\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor", out, "1 dead", "work ok", "warn  pipeline   1 dead jobs (last error: provider returned 503)",
		"hybrid recall with embedding model text-embedding-3-small")

	code, out, _ = runApp(t, env, "", "doctor", "--offline", "--json")
	var report struct {
		Healthy bool    `json:"healthy"`
		Checks  []check `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != 0 || !report.Healthy {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	warned := false
	for _, c := range report.Checks {
		warned = warned || (c.Name == "pipeline" && c.Status == "warn" && strings.Contains(c.Detail, "dead jobs"))
	}
	if !warned {
		t.Fatalf("no pipeline warning in %+v", report.Checks)
	}
}

// TestPipelineModeSetting: KIOKU_PIPELINE_MODE accepts the operator modes and names
// itself when wrong; frozen is the operator's halt, which guilds cannot choose.
func TestPipelineModeSetting(t *testing.T) {
	for mode, want := range map[string]memory.PipelineMode{"full": memory.PipelineFull, "Controlled": memory.PipelineControlled,
		"shadow": memory.PipelineShadow, "frozen": memory.PipelineFrozen, "off": memory.PipelineOff} {
		cfg, err := LoadConfig(only("KIOKU_PIPELINE_MODE", mode))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if got := pipeline.ModeFlags(cfg.PipelineMode).Mode(); got != want {
			t.Errorf("KIOKU_PIPELINE_MODE=%s gives mode %s, want %s", mode, got, want)
		}
	}
	cfg, err := LoadConfig(func(string) (string, bool) { return "", false })
	if err != nil || cfg.PipelineMode != "full" || cfg.PipelineCallsPerHour != pipeline.DefaultCallsPerHour {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	if _, err := LoadConfig(only("KIOKU_PIPELINE_MODE", "sometimes")); err == nil ||
		!strings.Contains(err.Error(), "KIOKU_PIPELINE_MODE") {
		t.Fatalf("bad mode: %v", err)
	}
}

// only is an environment with one variable set.
func only(name, value string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == name {
			return value, true
		}
		return "", false
	}
}
