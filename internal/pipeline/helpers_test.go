package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/sashabaranov/go-openai"
)

var epoch = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// env is one pipeline on a real store, talking to the fake OpenAI server.
type env struct {
	t      *testing.T
	store  *ltm.Store
	clock  *testkit.Clock
	fake   *fakeopenai.Server
	client *llm.Client
	p      *pipeline.Pipeline
	logs   *syncBuffer
	msgSeq int // message ids of said turns: m1, m2, …
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnv builds an env; cfg's zero fields get the pipeline defaults, except that backoff
// jitter is exact so tests can compute retry times.
func newEnv(t *testing.T, cfg pipeline.Config) *env {
	t.Helper()
	e := &env{t: t, store: testkit.MustOpenStore(t), clock: testkit.NewClock(epoch), fake: fakeopenai.New(t), logs: &syncBuffer{}}
	e.store.Now = e.clock.Now
	client, err := llm.New(llm.Config{BaseURL: e.fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "chat-model",
		PipelineModel: "pipeline-model", EmbedModel: "embed-model", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	client.Sleep = func(context.Context, time.Duration) error { return nil }
	e.client = client
	e.fake.Default(defaultBrain)
	if cfg.Jitter == nil {
		cfg.Jitter = func(d time.Duration) time.Duration { return d }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	e.p, err = pipeline.New(cfg, storeDeps(e.store, client))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// withEmbeddings turns on the vector leg of recall, through the fake's embeddings.
func (e *env) withEmbeddings() *env {
	e.store.Recall.SetEmbedder(e.client.Embed, "embed-model")
	return e
}

// say stores a user turn and notifies the pipeline the way the chat turn does.
func (e *env) say(guild, channel, user, name, text string) memory.Turn {
	e.t.Helper()
	return e.sayWith(memory.Turn{GuildID: guild, ChannelID: channel, UserID: user, AuthorName: name, Content: text})
}

// sayAsEditor is say by a member who may change the guild's server memory.
func (e *env) sayAsEditor(guild, channel, user, name, text string) memory.Turn {
	e.t.Helper()
	return e.sayWith(memory.Turn{GuildID: guild, ChannelID: channel, UserID: user, AuthorName: name, Content: text, CanEditServer: true})
}

// sayWith stores user turn t (role and message id filled in) and notifies the pipeline.
func (e *env) sayWith(t memory.Turn) memory.Turn {
	e.t.Helper()
	e.msgSeq++
	t.Role, t.MessageID = memory.RoleUser, fmt.Sprintf("m%d", e.msgSeq)
	text := t.Content
	id, err := e.store.Transcripts.AppendTurn(e.t.Context(), t)
	if err != nil {
		e.t.Fatal(err)
	}
	t.ID, t.CreatedAt = id, e.clock.Now()
	if err := e.p.OnTurn(e.t.Context(), t, intent.HighSignal(text)); err != nil {
		e.t.Fatal(err)
	}
	return t
}

// reply stores an assistant turn.
func (e *env) reply(guild, channel, user, text string) {
	e.t.Helper()
	t := memory.Turn{GuildID: guild, ChannelID: channel, UserID: user, Role: memory.RoleAssistant, Content: text}
	if _, err := e.store.Transcripts.AppendTurn(e.t.Context(), t); err != nil {
		e.t.Fatal(err)
	}
	if err := e.p.OnTurn(e.t.Context(), t, false); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) tick() pipeline.TickResult {
	e.t.Helper()
	r, err := e.p.Tick(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) memories(owner memory.Owner) []*memory.Memory {
	e.t.Helper()
	ms, _, err := e.store.Memories.List(e.t.Context(), owner, memory.ListOptions{Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	return ms
}

func (e *env) contents(owner memory.Owner) []string {
	var out []string
	for _, m := range e.memories(owner) {
		out = append(out, m.Content)
	}
	return out
}

func (e *env) history(owner memory.Owner) []memory.HistoryEvent {
	e.t.Helper()
	evs, err := e.store.Memories.ScopeHistory(e.t.Context(), owner, 500)
	if err != nil {
		e.t.Fatal(err)
	}
	// oldest first reads better in assertions
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

func (e *env) actions(owner memory.Owner) []memory.Action {
	var out []memory.Action
	for _, ev := range e.history(owner) {
		out = append(out, ev.Action)
	}
	return out
}

func (e *env) jobs() []*memory.Job {
	e.t.Helper()
	js, err := e.store.Jobs.ListJobs(e.t.Context(), "", 500)
	if err != nil {
		e.t.Fatal(err)
	}
	return js
}

func (e *env) stats() memory.JobStats {
	e.t.Helper()
	st, err := e.store.Jobs.JobStats(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// chatCalls counts chat requests by kind.
func (e *env) chatCalls() (extractions, decisions int) {
	for _, r := range e.fake.ChatRequests() {
		if isExtraction(r) {
			extractions++
		} else {
			decisions++
		}
	}
	return
}

func isExtraction(r openai.ChatCompletionRequest) bool {
	return len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "You extract")
}

// fact is one fact in a scripted extraction reply.
type fact struct {
	Content    string  `json:"content"`
	Type       string  `json:"type,omitempty"`
	Confidence float64 `json:"confidence"`
	Scope      string  `json:"scope,omitempty"`
	SubjectID  string  `json:"subject_id,omitempty"`
	Evidence   []int   `json:"evidence,omitempty"`
}

func extraction(facts ...fact) fakeopenai.Response {
	b, _ := json.Marshal(map[string]any{"facts": facts, "entities": []any{}})
	return fakeopenai.Text(string(b))
}

func decision(action string, target int64, content string, confidence float64, reason string) fakeopenai.Response {
	b, _ := json.Marshal(map[string]any{"action": action, "target_id": target, "content": content,
		"confidence": confidence, "reason": reason})
	return fakeopenai.Text(string(b))
}

var (
	conversationBlock = regexp.MustCompile(`(?s)<conversation>\n(.*)\n</conversation>`)
	factLine          = regexp.MustCompile(`(?m)^\(\w+\) (".*")$`)
	candLine          = regexp.MustCompile(`(?m)^\[id:(\d+)\] \([^)]*\) (".*")$`)
)

// records decodes the conversation records of an extraction request.
func records(req openai.ChatCompletionRequest) []pipeline.Record {
	m := conversationBlock.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content)
	if m == nil {
		return nil
	}
	var recs []pipeline.Record
	if err := json.Unmarshal([]byte(m[1]), &recs); err != nil {
		panic(fmt.Sprintf("the conversation block is not a JSON array of records: %v\n%s", err, m[1]))
	}
	return recs
}

// unquote reads a quoted prompt string.
func unquote(s string) string {
	u, err := strconv.Unquote(s)
	if err != nil {
		return s
	}
	return u
}

// defaultBrain is a deterministic model for tests that do not script replies. Extraction:
// every person's record of at least ten characters becomes a fact citing it: personal
// (about its speaker) when it starts with "I ", server otherwise. Decision: a fact containing "instead"
// updates the first candidate, one containing "no longer" deletes it, a fact equal to a
// candidate is NONE, anything else is ADD.
func defaultBrain(req openai.ChatCompletionRequest) fakeopenai.Response {
	user := req.Messages[len(req.Messages)-1].Content
	if isExtraction(req) {
		var facts []fact
		for _, r := range records(req) {
			if r.Bot || len(r.Text) < 10 {
				continue
			}
			f := fact{Content: r.Text, Type: "fact", Confidence: 0.9, Scope: "server", Evidence: []int{r.N}}
			if strings.HasPrefix(r.Text, "I ") {
				f.Content, f.Scope, f.SubjectID = r.Speaker+" "+strings.TrimPrefix(r.Text, "I "), "personal", r.SpeakerID
			}
			facts = append(facts, f)
		}
		return extraction(facts...)
	}
	fm := factLine.FindStringSubmatch(user)
	cands := candLine.FindAllStringSubmatch(user, -1)
	if fm == nil || len(cands) == 0 {
		return fakeopenai.Text("not json")
	}
	first, _ := strconv.ParseInt(cands[0][1], 10, 64)
	switch f := unquote(fm[1]); {
	case strings.Contains(f, "no longer"):
		return decision("DELETE", first, "", 0.9, "the fact retracts it")
	case strings.Contains(f, "instead"):
		return decision("UPDATE", first, f, 0.9, "the fact corrects it")
	case strings.EqualFold(f, unquote(cands[0][2])):
		return decision("NONE", first, "", 0.9, "already known")
	default:
		return decision("ADD", 0, f, 0.9, "new information")
	}
}

// storeDeps hands store to every seam of the pipeline, as cmd/kioku does.
func storeDeps(store *ltm.Store, model pipeline.Model) pipeline.Deps {
	housekeeping := struct {
		*ltm.Maintenance
		*ltm.Guilds
	}{store.Maintenance, store.Guilds}
	candidates := struct {
		*ltm.Recall
		*ltm.Graph
	}{store.Recall, store.Graph}
	return pipeline.Deps{Jobs: store.Jobs, Ledger: store.Jobs, Transcript: store.Transcripts, Facts: store.Facts, Candidates: candidates,
		Settings: store.Settings, Housekeeping: housekeeping, Model: model, Quote: contextbuild.Quote, Now: func() time.Time { return store.Now() }}
}
