package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/pipeline"
	"github.com/sashabaranov/go-openai"
)

// errUnhealthy makes `kioku doctor` exit 1 after printing its report.
var errUnhealthy = errors.New("unhealthy")

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
}

func runDoctor(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "doctor")
	asJSON := fs.Bool("json", false, "print JSON")
	offline := fs.Bool("offline", false, "skip the LLM endpoint check")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	checks := []check{{"config", "ok", "settings parsed"}}
	if app.config.DiscordToken == "" {
		checks = append(checks, check{"discord", "warn", "KIOKU_DISCORD_TOKEN is not set; `kioku run` needs it"})
	} else {
		checks = append(checks, check{"discord", "ok", "token set, API " + app.config.DiscordAPIURL})
	}
	checks = append(checks, app.checkStore(ctx)...)
	if *offline {
		checks = append(checks, check{"llm", "warn", "skipped (--offline)"})
	} else {
		checks = append(checks, app.checkLLM(ctx))
	}
	if app.config.EmbedModel == "" {
		// A supported way to run (SPEC §5), so not a warning that would sound on every
		// run; but the line says plainly what it costs.
		checks = append(checks, check{"recall", "ok", "keyword-only recall: KIOKU_EMBED_MODEL is empty, so memories are found by their words alone, not by meaning; set it to an embedding model for hybrid recall"})
	} else {
		checks = append(checks, app.checkHybridRecall(ctx, *offline))
	}
	healthy := true
	for _, c := range checks {
		if c.Status == "fail" {
			healthy = false
		}
	}
	if *asJSON {
		if err := writeJSON(app.Stdout, map[string]any{"healthy": healthy, "checks": checks}); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintf(app.Stdout, "%-4s  %-10s %s\n", c.Status, c.Name, c.Detail)
		}
	}
	if !healthy {
		return errUnhealthy
	}
	return nil
}

func (app *App) checkStore(ctx context.Context) []check {
	store, err := app.openStore(ctx)
	if err != nil {
		return []check{{"database", "fail", err.Error()}}
	}
	defer store.Close()
	st, err := store.Maintenance.Stats(ctx, "")
	if err != nil {
		return []check{{"database", "fail", err.Error()}}
	}
	out := []check{{"database", "ok", fmt.Sprintf("%s: %d migrations, %.1f MB, %d memories (%d forgotten), %d transcript turns",
		app.config.DB, st.Migrations, float64(st.DBBytes)/1e6, st.Memories, st.Forgotten, st.Turns)}}
	if !st.IntegrityOK {
		out[0] = check{"database", "fail", "integrity check: " + st.IntegrityErr}
	}
	return append(out, pipelineChecks(ctx, store, app.config.PipelineMode)...)
}

// pipelineChecks reports the background pipeline as the database records it: queue depth,
// dead jobs and the last run of each task in one line, then one warning line per problem
// (dead jobs, expired leases, failed runs, a due job nobody works on). Doctor runs in its
// own process, so the running bot's model budget is not known here.
func pipelineChecks(ctx context.Context, store *ltm.Store, mode memory.PipelineMode) []check {
	st, err := pipeline.ReadStatus(ctx, store.Jobs, store.Now())
	if err != nil {
		return []check{{"pipeline", "fail", err.Error()}}
	}
	summary := st.Summary()
	if len(st.Runs) == 0 {
		summary += "; no task has run yet (the pipeline runs inside `kioku run`)"
	}
	if mode != "" {
		summary = "mode " + string(mode) + ": " + summary
	}
	out := []check{{"pipeline", "ok", summary}}
	for _, p := range st.Problems() {
		out = append(out, check{"pipeline", "warn", p})
	}
	return out
}

// checkLLM lists the endpoint's models: cheap, supported by every OpenAI-compatible server
// we know of, and it proves the URL and key are right.
func (app *App) checkLLM(ctx context.Context) check {
	cfg := openai.DefaultConfig(app.config.LLMAPIKey)
	cfg.BaseURL = app.config.LLMBaseURL
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	models, err := openai.NewClientWithConfig(cfg).ListModels(ctx)
	if err != nil {
		return check{"llm", "fail", fmt.Sprintf("%s unreachable: %v", app.config.LLMBaseURL, err)}
	}
	served := make(map[string]bool, len(models.Models))
	for _, m := range models.Models {
		served[m.ID] = true
	}
	// The pipeline's model runs in the background, where a wrong name shows only as dead
	// jobs; say so here, where the operator is looking.
	want := []string{app.config.ChatModel}
	if pm := app.config.PipelineModel; pm != "" && pm != app.config.ChatModel {
		want = append(want, pm)
	}
	var missing []string
	for _, m := range want {
		if !served[m] {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return check{"llm", "warn", fmt.Sprintf("%s answered but does not list %s (%d models)", app.config.LLMBaseURL, strings.Join(missing, ", "), len(models.Models))}
	}
	return check{"llm", "ok", fmt.Sprintf("%s serves %s", app.config.LLMBaseURL, strings.Join(want, ", "))}
}
