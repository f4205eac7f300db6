package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/sashabaranov/go-openai"
)

// instantModel is the chat model of a timed turn: it answers at once, in process, so a
// turn's time is kioku's own work.
type instantModel struct{}

func (instantModel) Complete(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "Sure, here is what I remember about that."},
		FinishReason: openai.FinishReasonStop,
	}}}, nil
}

// timedRecall adds up the time a turn spends in recall.
type timedRecall struct {
	*ltm.Recall
	spent atomic.Int64
}

func (t *timedRecall) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	start := time.Now()
	res, err := t.Recall.Search(ctx, q)
	t.spent.Add(int64(time.Since(start)))
	return res, err
}

// turns times whole chat turns in the hot guild, one member asking the hot guild's queries
// in one channel: speaker settings, rate limit, transcript write, intent gate, context
// build with recall, the tool loop with an instant model, the reply's transcript write and
// short-term capture.
func (r *run) turns(ctx context.Context, store *ltm.Store, rep *Report) error {
	short, err := stm.New(stm.Options{})
	if err != nil {
		return err
	}
	recall := &timedRecall{Recall: store.Recall}
	engine, err := chat.New(chat.Config{TurnsPerMinute: 1 << 30}, chat.Deps{Memories: store.Memories, Duplicates: store.Duplicates, Recall: recall,
		Transcript: store.Transcripts, Settings: store.Settings, ShortTerm: short, Model: instantModel{}})
	if err != nil {
		return err
	}
	guild := r.c.scopes[0].id
	// A turn's own cost is timed in a warm hot guild, as in a bot where it is asked all
	// the time; a cold scope's first answer is cold_recall's measure.
	asker := []memory.Owner{memory.ServerOwner(guild), memory.PersonalOwner(userID(0))}
	if err := store.Recall.WarmKeywordIndex(ctx, asker...); err != nil {
		return err
	}
	for _, o := range asker {
		if err := store.Recall.WarmVectors(ctx, o); err != nil {
			return err
		}
	}
	r.progress("timing %d chat turns", r.opt.Turns)
	var turn, inRecall, plain []time.Duration
	// Each turn's query is also asked as a plain recall, before the turn or after it in
	// turn, so the baseline sees the same moments of the machine and the same warmth.
	timePlain := func(q query) error {
		start := time.Now()
		if _, err := store.Recall.Search(ctx, r.search(q, false)); err != nil {
			return err
		}
		plain = append(plain, time.Since(start))
		return nil
	}
	for i := range r.opt.Turns {
		q := r.c.queries[i%len(r.c.queries)]
		if i%2 == 0 {
			if err := timePlain(q); err != nil {
				return err
			}
		}
		req := chat.Request{GuildID: guild, ChannelID: "bench-channel", UserID: userID(0), UserName: cast[0].name,
			MessageID: fmt.Sprint("bench-", i), Content: q.text}
		before := recall.spent.Load()
		start := time.Now()
		reply, err := engine.Turn(ctx, req)
		d := time.Since(start)
		if err != nil {
			return fmt.Errorf("couldn't run chat turn: %w", err)
		}
		if reply.Text == "" || reply.ModelUnavailable || reply.RateLimited || reply.BudgetSpent {
			return fmt.Errorf("chat turn %d was not answered: %+v", i, reply)
		}
		turn, inRecall = append(turn, d), append(inRecall, time.Duration(recall.spent.Load()-before))
		if i%2 == 1 {
			if err := timePlain(q); err != nil {
				return err
			}
		}
	}
	rep.Turns = len(turn)
	rep.TurnP50Ms, rep.TurnP99Ms = pct(turn, 0.50), pct(turn, 0.99)
	rep.TurnRecallP99Ms = pct(inRecall, 0.99)
	rep.TurnPlainRecallP99Ms = pct(plain, 0.99)
	rep.TurnVsRecall = ratio(rep.TurnP99Ms, rep.TurnPlainRecallP99Ms)
	return nil
}
