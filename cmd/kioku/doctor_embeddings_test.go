package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// TestRunTracksEmbeddingsAndDoctorReports: a memory stored without a vector (here by a
// process with no embedding model) is embedded by the tracker's run at `kioku run` start,
// and doctor's embeddings line shows the coverage before and after; without an embedding
// model doctor has no embeddings line.
func TestRunTracksEmbeddingsAndDoctorReports(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kioku.db")
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Memories.Remember(context.Background(), memory.Memory{Scope: memory.ScopeServer, GuildID: guildA,
		Content: "The guild meets on Saturdays"}, "user:1"); err != nil {
		t.Fatal(err)
	}
	store.Close()

	env := map[string]string{"KIOKU_DB": db}
	_, out, _ := runApp(t, env, "", "doctor", "--offline")
	mustNotContain(t, "doctor without an embedding model", out, "embeddings")
	env["KIOKU_EMBED_MODEL"] = "embed-model"
	code, out, stderr := runApp(t, env, "", "doctor", "--offline")
	if code != 0 {
		t.Fatalf("missing vectors made doctor fail (exit %d); they are a warning\n%s%s", code, out, stderr)
	}
	mustContain(t, "doctor before the tracker ran", out,
		"warn  embeddings 0 of 1 live memories have a vector of embed-model (0.0%); 1 wait for the embedding tracker")

	h := startBotWith(t, map[string]string{"KIOKU_DB": db, "KIOKU_EMBED_MODEL": "embed-model", "KIOKU_PIPELINE_MODE": "off"})
	store, err = sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var run memory.TaskRun
	waitFor(t, h, "the embedding tracker's start run to be recorded", func() bool {
		runs, err := store.Jobs.TaskRuns(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Name == pipeline.TaskEmbeddings {
				run = r
				return true
			}
		}
		return false
	})
	if !run.OK || !strings.HasPrefix(run.Detail, "embedded=1 refreshed=0 missing=0 calls=1") {
		t.Fatalf("start run %+v, want the memory embedded", run)
	}
	if reqs := h.ai.EmbeddingRequests(); len(reqs) != 1 || reqs[0].Model != "embed-model" {
		t.Fatalf("embedding requests %+v, want one for embed-model", reqs)
	}
	_, out, _ = runApp(t, env, "", "doctor", "--offline")
	mustContain(t, "doctor after the tracker ran", out, "ok    embeddings 1 of 1 live memories have a vector of embed-model (100.0%)")
}
