package main

import (
	"context"
	"fmt"
)

// embeddingsCheck is doctor's "embeddings" line when an embedding model is configured: how
// many live memories have a stored vector of that model for their current content. The
// rest are keyword-only in recall until the embedding tracker of a running bot fills them
// (every few minutes, while the provider answers), so a gap is a warning, not a failure.
func embeddingsCheck(ctx context.Context, store *backend, model string) []check {
	if model == "" {
		return nil
	}
	c, err := store.Recall.EmbeddingCoverage(ctx, model)
	if err != nil {
		return []check{{"embeddings", "fail", err.Error()}}
	}
	pct := 100.0
	if c.Live > 0 {
		pct = 100 * float64(c.Embedded) / float64(c.Live)
	}
	detail := fmt.Sprintf("%d of %d live memories have a vector of %s (%.1f%%)", c.Embedded, c.Live, model, pct)
	if missing := c.Live - c.Embedded; missing > 0 {
		return []check{{"embeddings", "warn", fmt.Sprintf("%s; %d wait for the embedding tracker (see the embeddings task's last run)", detail, missing)}}
	}
	return []check{{"embeddings", "ok", detail}}
}
