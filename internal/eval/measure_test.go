//go:build measure

// Measurement tests run whole evals and benchmark runs: minutes under -race on a small
// machine, so they leave the default `go test ./...` path. CI runs them without -race:
// go test -tags measure ./internal/bench ./internal/eval ./cmd/kioku

package eval_test

import (
	"context"
	"os"
	"testing"

	"github.com/kioku-bot/kioku/internal/eval"
)

// TestDevSetFloors runs the eval on the hand-written dev sets through the real write path and
// the real keyword recall, and fails when quality falls below the floors. Each floor is the
// value measured when it was set minus a small margin (docs/recall.md); raise it when recall
// improves. The English set must also beat plain FTS5 BM25, the Japanese set by far (plain
// FTS5 cannot segment Japanese at all).
func TestDevSetFloors(t *testing.T) {
	// The conversational sets repeat a few short replies ("yes!") that the write path
	// stores once, so only the fact-style sets must store every memory.
	floors := map[string]struct {
		recall10, mrr, overBaseline float64
		distinct                    bool
	}{
		"dev-en":      {recall10: 0.80, mrr: 0.65, overBaseline: 0.01, distinct: true},
		"dev-ja":      {recall10: 0.85, mrr: 0.57, overBaseline: 0.5, distinct: true},
		"dev-conv-en": {recall10: 0.46, mrr: 0.36, overBaseline: 0.13},
		"dev-conv-ja": {recall10: 0.50, mrr: 0.34, overBaseline: 0.4},
	}
	for name, floor := range floors {
		t.Run(name, func(t *testing.T) {
			rep, err := eval.Run(context.Background(), eval.Options{Dataset: repoFile(t, "testdata/eval/"+name+".json"), Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv("EVAL_VERBOSE") != "" {
				rep.WriteText(os.Stdout)
			}
			got := rep.Overall
			if got.Recall[10] < floor.recall10 || got.MRR < floor.mrr {
				t.Errorf("recall@10 %.4f (floor %.2f), mrr %.4f (floor %.2f)", got.Recall[10], floor.recall10, got.MRR, floor.mrr)
			}
			if d := got.Recall[10] - rep.Baseline.Recall[10]; d < floor.overBaseline {
				t.Errorf("recall@10 %.4f is only %+.4f over plain FTS5 BM25 (%.4f); want at least %+.2f",
					got.Recall[10], d, rep.Baseline.Recall[10], floor.overBaseline)
			}
			if floor.distinct && rep.Stored != rep.Memories {
				t.Errorf("dev set memories are all distinct, but the write path stored %d of %d", rep.Stored, rep.Memories)
			}
		})
	}
}
