//go:build scale

package vecindex_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// TestMeasureHeap reports the heap the index holds per memory at 384 dimensions, for one
// scope of 100k and for the many-servers shape of the scale benchmark (one guild of 100k
// and 1,000 guilds of 1,000: 1.1M). Every row carries meta as the store gives it: strings
// of their own (as scanned from SQLite), a content hash, a channel and an author. Run with
// `go test -tags scale -run TestMeasureHeap -v ./internal/vecindex/`; it needs a few GB.
func TestMeasureHeap(t *testing.T) {
	for _, shape := range []struct {
		name   string
		scopes []int
	}{
		{"100k in one scope", []int{100_000}},
		{"1.1M over 1,001 scopes", append([]int{100_000}, repeat(1000, 1000)...)},
	} {
		t.Run(shape.name, func(t *testing.T) {
			before := heap()
			start := time.Now()
			x, n := buildScopes(shape.scopes)
			took := time.Since(start)
			after := heap()
			used := float64(after - before)
			t.Logf("%d vectors in %d scopes: heap %.0f MB, %.0f bytes/memory, built in %s", n, len(shape.scopes),
				used/(1<<20), used/float64(n), took.Round(time.Millisecond))
			if x.Len() != n {
				t.Fatalf("index holds %d vectors, want %d", x.Len(), n)
			}
			runtime.KeepAlive(x)
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func buildScopes(sizes []int) (*vecindex.Index, int) {
	rng := rand.New(rand.NewPCG(7, 7))
	centres := make([][]float32, benchTopics)
	for i := range centres {
		centres[i] = unit(rng, benchDims)
	}
	x := vecindex.New()
	id := int64(0)
	for s, n := range sizes {
		guild := strconv.Itoa(100000000000000000 + s)
		key := "g:" + guild
		for i := range n {
			id++
			meta := vecindex.Meta{OriginGuild: strings.Clone(guild), Channel: strconv.Itoa(200000000000000000 + i%20),
				CreatedAt: 1_700_000_000_000 + id, Type: strings.Clone("fact"), Importance: 0.5,
				AuthorID: strconv.Itoa(300000000000000000 + i%50)}
			hash := fmt.Sprintf("%064x", id)
			x.Upsert(key, id, hash, meta, near(rng, centres[int(id)%benchTopics], 0.06))
		}
	}
	return x, int(id)
}
