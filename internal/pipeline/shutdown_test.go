package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/pipeline"
)

// TestTaskCutShortByShutdown: a task whose context ends while it runs (Stop, or the
// process's own shutdown) was interrupted, not failed: it logs no error and records no
// failed run, so a clean exit reads clean and doctor shows no failure.
func TestTaskCutShortByShutdown(t *testing.T) {
	e := newEnv(t, pipeline.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.p.RunTask(ctx, pipeline.TaskRetention); err != nil {
		t.Fatal(err)
	}
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "pipeline task interrupted by shutdown") {
		t.Errorf("log of an interrupted run:\n%s", logs)
	}
	runs, err := e.store.Jobs.TaskRuns(t.Context())
	if err != nil || len(runs) != 0 {
		t.Errorf("runs %+v (%v), want none recorded", runs, err)
	}
}
