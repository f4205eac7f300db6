package pipeline

import (
	"context"

	"github.com/kioku-bot/kioku/memory"
)

// The embedding tracker (SPEC §4): a scheduled task that gives memories written while the
// embedding provider was down, edited since they were embedded, or embedded with another
// model the vector of the configured model, so the vector leg of recall covers them.
const (
	// TaskEmbeddings names the tracker's task; it is scheduled only when Deps.Embeddings
	// is set (an embedding model is configured).
	TaskEmbeddings = "embeddings"
	// DefaultEmbedSchedule runs the tracker every two minutes: a memory written during an
	// outage gets its vector within minutes of the provider's return, and a run with
	// nothing to do costs one read of the database.
	DefaultEmbedSchedule = "@every 2m"
	// DefaultEmbedBatch is how many memories one embedding call carries: one request of
	// the llm client (its DefaultEmbedBatchSize, within every OpenAI-compatible server's
	// input limits), and one short write transaction to store the vectors.
	DefaultEmbedBatch = 64
	// DefaultEmbedCallsPerRun bounds the calls of one run (1,024 memories), so a run
	// holds the provider for seconds, not minutes, and shutdown never waits long for it. A
	// larger backlog (a new model re-embeds every memory) is worked off over the next runs,
	// about 30,000 memories an hour.
	DefaultEmbedCallsPerRun = 16
)

// trackEmbeddings is the body of the embeddings task. A provider that is down skips the
// run (recorded as a successful run whose detail says "skipped" and why): it is not the
// pipeline's failure, and the next run tries again.
func (p *scheduler) trackEmbeddings(ctx context.Context) (string, error) {
	r, err := p.embeddings.TrackEmbeddings(ctx, memory.EmbedTrackOptions{Batch: p.cfg.EmbedBatch, MaxCalls: p.cfg.EmbedCallsPerRun})
	return r.String(), err
}
