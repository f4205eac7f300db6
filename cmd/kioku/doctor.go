package main

import (
	"context"
	"errors"
	"fmt"
	"time"

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
		checks = append(checks, check{"recall", "ok", "keyword-only recall: no KIOKU_EMBED_MODEL configured"})
	} else {
		checks = append(checks, check{"recall", "ok", "hybrid recall with embedding model " + app.config.EmbedModel})
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
	st, err := store.Stats(ctx, "")
	if err != nil {
		return []check{{"database", "fail", err.Error()}}
	}
	out := []check{{"database", "ok", fmt.Sprintf("%s: %d migrations, %.1f MB, %d memories (%d forgotten), %d transcript turns",
		app.config.DB, st.Migrations, float64(st.DBBytes)/1e6, st.Memories, st.Forgotten, st.Turns)}}
	if !st.IntegrityOK {
		out[0] = check{"database", "fail", "integrity check: " + st.IntegrityErr}
	}
	queue := check{"queue", "ok", fmt.Sprintf("%d queued, %d leased, %d dead", st.Jobs["queued"], st.Jobs["leased"], st.Jobs["dead"])}
	if st.Jobs["dead"] > 0 {
		queue.Status = "warn"
	}
	return append(out, queue)
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
	for _, m := range models.Models {
		if m.ID == app.config.ChatModel {
			return check{"llm", "ok", fmt.Sprintf("%s serves %s", app.config.LLMBaseURL, app.config.ChatModel)}
		}
	}
	return check{"llm", "warn", fmt.Sprintf("%s answered but does not list %s (%d models)", app.config.LLMBaseURL, app.config.ChatModel, len(models.Models))}
}
