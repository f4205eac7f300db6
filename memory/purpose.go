package memory

import "context"

// ModelPurpose says what a model call is for, so that its usage can be told apart in the
// operator's metrics: a chat turn, the pipeline's extraction or decision, or an embedding.
type ModelPurpose string

// The purposes of model calls.
const (
	PurposeChat       ModelPurpose = "chat"
	PurposeExtraction ModelPurpose = "extraction"
	PurposeDecision   ModelPurpose = "decision"
	PurposeEmbedding  ModelPurpose = "embedding"
)

// purposeKey is the context key of a call's ModelPurpose.
type purposeKey struct{}

// WithModelPurpose returns ctx marked with the purpose of the model calls made under it.
// The caller that knows why it asks (the pipeline, between extraction and decision) marks
// its context; the model client reads the mark without either importing the other.
func WithModelPurpose(ctx context.Context, p ModelPurpose) context.Context {
	return context.WithValue(ctx, purposeKey{}, p)
}

// ModelPurposeFrom returns the purpose ctx was marked with, and false when it has none.
func ModelPurposeFrom(ctx context.Context) (ModelPurpose, bool) {
	p, ok := ctx.Value(purposeKey{}).(ModelPurpose)
	return p, ok
}
