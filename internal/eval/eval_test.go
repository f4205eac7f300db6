package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kioku-bot/kioku/internal/eval"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}

func TestDevReport(t *testing.T) {
	for _, name := range []string{"dev-en", "dev-ja"} {
		path := repoFile(t, "testdata/eval/"+name+".json")
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s not present", path)
		}
		rep, err := eval.Run(context.Background(), eval.Options{Dataset: path})
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("EVAL_VERBOSE") != "" {
			rep.WriteText(os.Stdout)
			if os.Getenv("EVAL_VERBOSE") == "2" {
				for _, m := range rep.Misses {
					t.Logf("miss %s %s [%s] %s", m.Scope, m.QueryID, m.Category, m.Text)
				}
			}
		}
	}
}
