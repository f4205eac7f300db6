package bench_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/kioku-bot/kioku/internal/bench"
)

func TestRunSmall(t *testing.T) {
	n := 3000
	if v, _ := strconv.Atoi(os.Getenv("BENCH_N")); v > 0 {
		n = v
	}
	rep, err := bench.Run(context.Background(), bench.Options{Memories: n, Dims: 384, Queries: 200, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(os.Stdout)
}
