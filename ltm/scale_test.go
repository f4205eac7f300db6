//go:build scale

// Scale measurements of the vector side of recall at many servers: minutes and gigabytes,
// so they sit behind their own build tag, outside CI.
//
//	KIOKU_SCALE_DB=/tmp/scale.db go test -tags scale -run TestMeasureVectorScale -v -timeout 2h ./ltm/
//
// The database is built on the first run (one hot server of KIOKU_SCALE_HOT memories and
// KIOKU_SCALE_GUILDS servers of KIOKU_SCALE_SMALL, 384-dimension vectors) and reused after.
// The measuring runs in a fresh child process so its RSS is the store's alone.

package ltm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

const scaleDims = 384

func scaleEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func scaleEmbed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeopenai.EmbedText(t, scaleDims)
	}
	return out, nil
}

var scaleWords = func() []string {
	rng := rand.New(rand.NewPCG(5, 5))
	out := make([]string, 3000)
	for i := range out {
		b := make([]byte, 4+rng.IntN(6))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		out[i] = string(b)
	}
	return out
}()

func scaleText(rng *rand.Rand, g, i int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "note %d of %d:", i, g)
	for range 6 + rng.IntN(8) {
		sb.WriteByte(' ')
		sb.WriteString(scaleWords[rng.IntN(len(scaleWords))])
	}
	return sb.String()
}

func scaleGuild(g int) string { return strconv.Itoa(900000000000000000 + g) }

func TestMeasureVectorScale(t *testing.T) {
	hot, guilds, small := scaleEnv("KIOKU_SCALE_HOT", 100_000), scaleEnv("KIOKU_SCALE_GUILDS", 1000), scaleEnv("KIOKU_SCALE_SMALL", 1000)
	path := os.Getenv("KIOKU_SCALE_DB")
	if path == "" {
		path = filepath.Join(t.TempDir(), "scale.db")
	}
	if os.Getenv("KIOKU_SCALE_CHILD") == "1" {
		measureScale(t, path, guilds)
		return
	}
	if _, err := os.Stat(path); err != nil {
		buildScale(t, path, hot, guilds, small)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeasureVectorScale$", "-test.v", "-test.timeout=2h")
	cmd.Env = append(os.Environ(), "KIOKU_SCALE_CHILD=1", "KIOKU_SCALE_DB="+path)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

func buildScale(t *testing.T, path string, hot, guilds, small int) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.MaxServerMemories = -1
	s.Recall.SetEmbedder(scaleEmbed, "scale-embed")
	rng := rand.New(rand.NewPCG(1, 1))
	start := time.Now()
	total := 0
	for g := 0; g <= guilds; g++ {
		n := small
		if g == 0 {
			n = hot
		}
		for lo := 0; lo < n; lo += 5000 {
			batch := make([]memory.Memory, 0, 5000)
			for i := lo; i < min(lo+5000, n); i++ {
				batch = append(batch, memory.Memory{Scope: memory.ScopeServer, GuildID: scaleGuild(g), Content: scaleText(rng, g, i),
					Source: memory.SourceImport, CreatedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)})
			}
			if _, err := s.Transfer.RememberMany(ctx, batch, "scale"); err != nil {
				t.Fatal(err)
			}
			total += len(batch)
		}
		if g%100 == 0 {
			t.Logf("built %d memories in %s", total, time.Since(start).Round(time.Second))
		}
	}
}

// procStatus reads a kB field of /proc/self/status in MB.
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return -1
}

func measureScale(t *testing.T, path string, guilds int) {
	ctx := context.Background()
	start := time.Now()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Recall.SetEmbedder(scaleEmbed, "scale-embed")
	open := time.Since(start)
	t.Logf("open (migrations checked) + embedder set: %s", open.Round(time.Millisecond))

	start = time.Now()
	res, err := s.Recall.TrackEmbeddings(ctx, memory.EmbedTrackOptions{Batch: 64, MaxCalls: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embedding tracker's first run: %s (%+v), RSS %.0f MB", time.Since(start).Round(time.Millisecond), res, procStatus("VmRSS"))

	recall := func(g int) time.Duration {
		start := time.Now()
		rng := rand.New(rand.NewPCG(uint64(g), 9))
		if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: scaleText(rng, g, 0), Owners: []memory.Owner{memory.ServerOwner(scaleGuild(g))}}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	t.Logf("small guild: first recall %s, second %s", recall(1).Round(time.Microsecond), recall(1).Round(time.Microsecond))
	t.Logf("hot guild: first recall %s, second %s", recall(0).Round(time.Microsecond), recall(0).Round(time.Microsecond))
	start = time.Now()
	for g := 2; g <= guilds; g++ {
		recall(g)
	}
	t.Logf("every other guild recalled once: %s", time.Since(start).Round(time.Millisecond))
	t.Logf("hot guild again: %s", recall(0).Round(time.Microsecond))
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	st := s.Recall.EmbedStatus()
	t.Logf("resident vectors %d; Go heap %.0f MB; RSS %.0f MB; peak RSS %.0f MB", st.Vectors, float64(m.HeapAlloc)/(1<<20),
		procStatus("VmRSS"), procStatus("VmHWM"))
}
