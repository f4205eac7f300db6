package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/llm"
)

// embedProbeTimeout bounds doctor's one embedding request.
const embedProbeTimeout = 10 * time.Second

// checkHybridRecall is doctor's recall line when an embedding model is configured. Unless
// offline, it embeds one short text: a provider that is down, or that does not serve the
// model, shows here as a warning, where otherwise recall would only quietly lose its
// vector leg. It is a warning, not a failure: recall then finds memories by their words.
func (app *App) checkHybridRecall(ctx context.Context, offline bool) check {
	model := app.config.EmbedModel
	line := "hybrid recall with embedding model " + model
	if offline {
		return check{"recall", "ok", line}
	}
	client, err := llm.New(llm.Config{BaseURL: app.config.LLMBaseURL, APIKey: app.config.LLMAPIKey, EmbedModel: model,
		Timeout: embedProbeTimeout, MaxRetries: llm.NoRetries})
	if err != nil {
		return check{"recall", "fail", err.Error()}
	}
	vecs, err := client.Embed(ctx, []string{"kioku doctor"})
	if err != nil {
		return check{"recall", "warn", fmt.Sprintf("embedding model %s failed (%v): recall falls back to keywords, finding memories by their words alone, until the provider answers again", model, err)}
	}
	return check{"recall", "ok", fmt.Sprintf("%s (it answers, %d dimensions)", line, len(vecs[0]))}
}
