package bench_test

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/kioku-bot/kioku/internal/bench"
)

func TestProf(t *testing.T) {
	if os.Getenv("PROF") == "" {
		t.Skip()
	}
	f, _ := os.Create("/tmp/cpu.prof")
	pprof.StartCPUProfile(f)
	defer pprof.StopCPUProfile()
	rep, err := bench.Run(context.Background(), bench.Options{Memories: 20000, Dims: 384, Queries: 300})
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(os.Stdout)
}
