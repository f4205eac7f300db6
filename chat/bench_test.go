package chat_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/sashabaranov/go-openai"
)

// timedModel measures the time spent in the model, so the benchmark can report the turn's
// own overhead: everything but waiting for the completion.
type timedModel struct {
	chat.ChatModel
	spent atomic.Int64
}

func (m *timedModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	start := time.Now()
	resp, err := m.ChatModel.Complete(ctx, req)
	m.spent.Add(int64(time.Since(start)))
	return resp, err
}

// timedStore measures the time spent in hybrid recall, the part of a turn that grows with
// the number of memories, so the benchmark can show it apart from the turn's own work.
type timedStore struct {
	*ltm.Store
	spent atomic.Int64
}

func (s *timedStore) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	start := time.Now()
	res, err := s.Store.Recall.Search(ctx, q)
	s.spent.Add(int64(time.Since(start)))
	return res, err
}

// vocabulary returns n made-up words from syllables, deterministic for a seed, so the
// corpus has a realistic spread of shared and rare terms without any data file.
func vocabulary(r *rand.Rand, n int) []string {
	syllables := strings.Fields("ka ri to mo na shi ru ke yo ha mi su te ro a i u e o ta chi tsu ni ne no sa se so ma me")
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func sentence(r *rand.Rand, vocab []string, words int) string {
	parts := make([]string, words)
	for i := range parts {
		// Zipf-like: low indexes are common words, high indexes rare ones.
		parts[i] = vocab[int(float64(len(vocab))*r.Float64()*r.Float64())]
	}
	return strings.Join(parts, " ")
}

// BenchmarkTurn measures a whole chat turn with 1,000 and 10,000 memories in scope (four
// fifths server memories of the guild, one fifth personal memories of the speaker, a few
// pinned) and a full history,
// against a fake model that answers at once. p50_ms and p99_ms are the turn's overhead
// with the time spent in the model call subtracted; turn_p99_ms includes it (the
// loopback HTTP round trip to the fake). recall_p50_ms and recall_p99_ms are the part of
// the overhead spent in ltm's hybrid recall, own_p99_ms the overhead without it.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) { benchmarkTurn(b, n) })
	}
}

func benchmarkTurn(b *testing.B, memories int) {
	ctx := context.Background()
	store := testkit.MustOpenStore(b)
	short, err := stm.New(stm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := fakeopenai.New(b)
	srv.Default(func(openai.ChatCompletionRequest) fakeopenai.Response {
		return fakeopenai.Text("Sure, here is what I remember about that.")
	})
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: fakeopenai.APIKey, ChatModel: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	model := &timedModel{ChatModel: client}
	timed := &timedStore{Store: store}
	engine, err := chat.New(chat.Config{TurnsPerMinute: 1 << 30}, chat.Deps{Memories: store.Memories, Duplicates: store.Duplicates, Recall: timed, Transcript: store.Transcripts, Settings: store.Settings, ShortTerm: short, Model: model})
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: "g1", SelfTeaching: true}); err != nil {
		b.Fatal(err)
	}

	r := rand.New(rand.NewPCG(1, 2))
	vocab := vocabulary(r, 3000)
	mems := make([]memory.Memory, 0, memories)
	for i := range memories {
		m := memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: fmt.Sprintf("%s (note %d)", sentence(r, vocab, 8+r.IntN(12)), i)}
		if i%5 == 0 {
			m.Scope, m.UserID = memory.ScopePersonal, "111"
		}
		if i%1000 == 0 {
			m.Pinned = true
		}
		mems = append(mems, m)
	}
	if _, err := store.Transfer.RememberMany(ctx, mems, "bench"); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		t := memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "111", AuthorName: "Aiko", Role: memory.RoleUser, Content: sentence(r, vocab, 15)}
		if i%2 == 1 {
			t.Role = memory.RoleAssistant
		}
		if _, err := store.Transcripts.AppendTurn(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = "what do you remember about " + sentence(r, vocab, 3+r.IntN(5)) + "?"
	}

	var overhead, total, recall, own []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		req := chat.Request{GuildID: "g1", ChannelID: "c1", UserID: "111", UserName: "Aiko",
			MessageID: fmt.Sprint("m", i), Content: queries[i%len(queries)]}
		i++
		before, searchBefore := model.spent.Load(), timed.spent.Load()
		start := time.Now()
		reply, err := engine.Turn(ctx, req)
		d := time.Since(start)
		if err != nil || reply.Text == "" || reply.ModelUnavailable {
			b.Fatalf("turn: %+v, %v", reply, err)
		}
		o := d - time.Duration(model.spent.Load()-before)
		r := time.Duration(timed.spent.Load() - searchBefore)
		total, overhead, recall, own = append(total, d), append(overhead, o), append(recall, r), append(own, o-r)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, d := range [][]time.Duration{overhead, total, recall, own} {
		slices.Sort(d)
	}
	b.ReportMetric(ms(percentile(overhead, 0.50)), "p50_ms")
	b.ReportMetric(ms(percentile(overhead, 0.99)), "p99_ms")
	b.ReportMetric(ms(percentile(total, 0.99)), "turn_p99_ms")
	b.ReportMetric(ms(percentile(recall, 0.50)), "recall_p50_ms")
	b.ReportMetric(ms(percentile(recall, 0.99)), "recall_p99_ms")
	b.ReportMetric(ms(percentile(own, 0.99)), "own_p99_ms")
}

// percentile returns the p-th value of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
