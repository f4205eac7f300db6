package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

// countingStore is the real store with a count of the calls a turn makes into it, so two
// turns can be compared call for call. Not a mock: every call goes to SQLite.
type countingStore struct {
	*ltm.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingStore) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[name]++
}

func (c *countingStore) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

func (c *countingStore) Remember(ctx context.Context, m memory.Memory, actor memory.Actor) (memory.WriteResult, error) {
	c.count("Remember")
	return c.Store.Memories.Remember(ctx, m, actor)
}

func (c *countingStore) RememberAs(ctx context.Context, w memory.WriteContext, m memory.Memory, actor memory.Actor, ev ...memory.MessageRef) (memory.WriteResult, error) {
	c.count("RememberAs")
	return c.Store.Memories.RememberAs(ctx, w, m, actor, ev...)
}

func (c *countingStore) SimilarAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, content string) (*memory.Memory, error) {
	c.count("SimilarAs")
	return c.Store.Duplicates.SimilarAs(ctx, w, owner, content)
}

func (c *countingStore) Get(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error) {
	c.count("Get")
	return c.Store.Memories.Get(ctx, owner, id)
}

func (c *countingStore) Modify(ctx context.Context, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	c.count("Modify")
	return c.Store.Memories.Modify(ctx, owner, id, ch, actor)
}

func (c *countingStore) ModifyAs(ctx context.Context, w memory.WriteContext, owner memory.Owner, id int64, ch memory.Change, actor memory.Actor) (*memory.Memory, error) {
	c.count("ModifyAs")
	return c.Store.Memories.ModifyAs(ctx, w, owner, id, ch, actor)
}

func (c *countingStore) Forget(ctx context.Context, owner memory.Owner, ids []int64, actor memory.Actor, reason string) ([]*memory.Memory, error) {
	c.count("Forget")
	return c.Store.Memories.Forget(ctx, owner, ids, actor, reason)
}

func (c *countingStore) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	c.count("Search")
	return c.Store.Recall.Search(ctx, q)
}

func (c *countingStore) List(ctx context.Context, owner memory.Owner, opt memory.ListOptions) ([]*memory.Memory, int, error) {
	c.count("List")
	return c.Store.Memories.List(ctx, owner, opt)
}

func (c *countingStore) AppendTurn(ctx context.Context, t memory.Turn) (int64, error) {
	c.count("AppendTurn")
	return c.Store.Transcripts.AppendTurn(ctx, t)
}

func (c *countingStore) RecentTurns(ctx context.Context, guildID, channelID, userID string, limit int) ([]memory.Turn, error) {
	c.count("RecentTurns")
	return c.Store.Transcripts.RecentTurns(ctx, guildID, channelID, userID, limit)
}

func (c *countingStore) UserSettings(ctx context.Context, userID string) (memory.UserSettings, error) {
	c.count("UserSettings")
	return c.Store.Settings.UserSettings(ctx, userID)
}

func (c *countingStore) UsersSettings(ctx context.Context, ids []string) (map[string]memory.UserSettings, error) {
	c.count("UsersSettings")
	return c.Store.Settings.UsersSettings(ctx, ids)
}

func (c *countingStore) PinnedVersion(ctx context.Context, owner memory.Owner) (int64, error) {
	c.count("PinnedVersion")
	return c.Store.Memories.PinnedVersion(ctx, owner)
}

func (c *countingStore) GuildSettings(ctx context.Context, guildID string) (memory.GuildSettings, error) {
	c.count("GuildSettings")
	return c.Store.Settings.GuildSettings(ctx, guildID)
}

// countingEnv is newEnv with the engine reading and writing through a countingStore.
func countingEnv(t *testing.T) (*env, *countingStore) {
	e := newEnv(t, chat.Config{})
	cs := &countingStore{Store: e.store, calls: map[string]int{}}
	engine, err := chat.New(chat.Config{Now: e.clock.Now}, chat.Deps{Memories: cs, Duplicates: cs, Recall: cs, Transcript: cs, Settings: cs, ShortTerm: e.short, Model: e.model})
	if err != nil {
		t.Fatal(err)
	}
	e.engine = engine
	return e, cs
}

// Item 1 (dedup oracle): Ben asks the bot in a guild to remember a fact about Aiko that
// Aiko already holds as a DM-origin personal memory, which Ben cannot see, word for word or
// in other words. His tool result and notice are those of a fresh save (a new id), and the
// turn makes the same store and model calls as a fresh save does.
func TestHiddenDuplicateLooksLikeFreshSave(t *testing.T) {
	for name, hiddenContent := range map[string]string{"Exact": "Aiko is allergic to peanuts", "Paraphrase": "Aiko has a peanut allergy"} {
		t.Run(name, func(t *testing.T) { testHiddenDuplicate(t, hiddenContent) })
	}
}

func testHiddenDuplicate(t *testing.T, hiddenContent string) {
	const fact = "Aiko is allergic to peanuts"
	type outcome struct {
		result  map[string]any
		notices []string
		calls   map[string]int
		models  int
		rows    int
	}
	run := func(t *testing.T, hidden bool) (outcome, int64) {
		ctx := context.Background()
		e, cs := countingEnv(t)
		e.selfTeaching("g1", true)
		var hiddenID int64
		if hidden {
			hiddenID = e.remember(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", Content: hiddenContent,
				Provenance: memory.Provenance{AuthorID: "111"}}).ID
		}
		// Aiko spoke just now, so she takes part and Ben may save about her.
		if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "111", AuthorName: "Aiko",
			Role: memory.RoleUser, Content: "hi all", CreatedAt: start.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		e.srv.Script(
			fakeopenai.ToolCalls(call(tools.NameCreateLTM, `{"memory_content":"`+fact+`","memory_scope":"target_user","target_user":"111"}`)),
			fakeopenai.Text("Noted."),
		)
		reply := e.turn(chat.Request{GuildID: "g1", ChannelID: "c1", UserID: "222", UserName: "Ben", MessageID: "m-ben",
			Content: "remember that Aiko is allergic to peanuts"})
		var out outcome
		for _, n := range reply.Notices {
			out.notices = append(out.notices, fmt.Sprintf("%s %s %s", n.Action, n.Scope, n.Content))
		}
		reqs := e.srv.ChatRequests()
		out.models = len(reqs)
		results := toolResults(reqs[len(reqs)-1])
		if len(results) != 1 {
			t.Fatalf("%d tool results, want 1", len(results))
		}
		if err := json.Unmarshal([]byte(results[0].Content), &out.result); err != nil {
			t.Fatal(err)
		}
		id := int64(out.result["memory_id"].(float64))
		delete(out.result, "memory_id")
		out.calls = cs.snapshot()
		st, err := e.store.Health.Counts(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		out.rows = st.Memories + st.Forgotten + st.HistoryRows
		if hidden {
			if id == hiddenID || len(reply.Notices) != 1 || reply.Notices[0].MemoryID != id {
				t.Fatalf("Ben's save went to #%d (hidden #%d), notices %+v: want a new memory with its notice", id, hiddenID, reply.Notices)
			}
			out.rows-- // the hidden memory's own row and history were there before
			out.rows--
		}
		return out, id
	}
	fresh, _ := run(t, false)
	over, _ := run(t, true)
	if fmt.Sprint(fresh.result) != fmt.Sprint(over.result) {
		t.Errorf("tool result over a hidden duplicate = %v, fresh save = %v", over.result, fresh.result)
	}
	if fmt.Sprint(fresh.notices) != fmt.Sprint(over.notices) {
		t.Errorf("notices over a hidden duplicate = %v, fresh save = %v", over.notices, fresh.notices)
	}
	if !maps.Equal(fresh.calls, over.calls) {
		t.Errorf("store calls over a hidden duplicate = %v, fresh save = %v", over.calls, fresh.calls)
	}
	if fresh.models != over.models || fresh.rows != over.rows {
		t.Errorf("model calls %d vs %d, rows written %d vs %d (hidden vs fresh)", over.models, fresh.models, over.rows, fresh.rows)
	}
	if _, known := over.result["already_known"]; known {
		t.Errorf("tool result says already known: %v", over.result)
	}
	if _, similar := over.result["similar_to"]; similar {
		t.Errorf("tool result names a similar memory: %v", over.result)
	}
}

// Item 9: a member at privacy level full is left out of the prompt however many other
// people spoke after them (the old lookup stopped after 50 authors).
func TestFullPrivacyExclusionHasNoCap(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	say := func(user, content string, ago time.Duration) {
		t.Helper()
		if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: user, AuthorName: "user " + user,
			Role: memory.RoleUser, Content: content, CreatedAt: start.Add(-ago)}); err != nil {
			t.Fatal(err)
		}
	}
	say("hermit", "my secret phrase is periwinkle-falcon", 70*time.Minute)
	for i := range 60 {
		say(fmt.Sprintf("v%02d", i), fmt.Sprintf("hello number %d", i), time.Duration(60-i)*time.Minute)
	}
	if err := e.store.Settings.SetPrivacy(ctx, "hermit", memory.PrivacyFull); err != nil {
		t.Fatal(err)
	}
	e.srv.Script(fakeopenai.Text("hi"))
	e.turn(e.guild("what's new?"))
	prompt := allText(e.lastChat())
	if !strings.Contains(prompt, "hello number 0") {
		t.Fatalf("the history is missing the other authors; the test proves nothing:\n%s", prompt)
	}
	if strings.Contains(prompt, "periwinkle") {
		t.Fatalf("a full-privacy member's words reached the prompt past 60 other authors:\n%s", prompt)
	}
}

// Item 10: a channel summary written from a prompt that quotes a member is dropped by
// that member's forget-me, even when they spoke too long ago to count as a participant
// and their message is no longer in short-term memory.
func TestSummaryDroppedByQuotedAuthorsForgetMe(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	if _, err := e.store.Transcripts.AppendTurn(ctx, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "333", AuthorName: "Cleo",
		Role: memory.RoleUser, Content: "I am moving to Osaka next month", CreatedAt: start.Add(-3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.srv.Script(
		fakeopenai.ToolCalls(call(tools.NameUpdateSTM, `{"summary":"Cleo is moving to Osaka next month; Aiko asked about it."}`)),
		fakeopenai.Text("Cleo mentioned Osaka."),
	)
	e.turn(e.guild("what did Cleo say earlier?"))
	if !strings.Contains(allText(e.srv.ChatRequests()[0]), "Osaka") {
		t.Fatal("Cleo's message is not in the prompt; the test proves nothing")
	}
	key := stm.ChannelKey("g1", "c1")
	if v := e.short.Context(key); !strings.Contains(v.Summary, "Osaka") {
		t.Fatalf("summary not written: %+v", v)
	}
	e.short.ClearUser("333")
	if v := e.short.Context(key); strings.Contains(v.Summary, "Osaka") {
		t.Fatalf("a summary quoting Cleo survived her forget-me: %q", v.Summary)
	}
}

// Item 12: a pinned memory forgotten by the /memory command path (Store.Forget, with no
// call to Invalidate) or by the CLI in another process is gone from the very next turn.
func TestForgottenPinnedMemoryLeavesNextTurn(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chat.Config{})
	one := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rule one: be kind", Pinned: true})
	two := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rule two: no spoilers", Pinned: true})
	prompt := func() string {
		e.turn(e.guild("hello"))
		return systemText(e.lastChat())
	}
	if p := prompt(); !strings.Contains(p, "Rule one") || !strings.Contains(p, "Rule two") {
		t.Fatalf("pinned memories missing:\n%s", p)
	}
	if _, err := e.store.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{one.ID}, memory.UserActor("999"), "forgotten by command"); err != nil {
		t.Fatal(err)
	}
	if p := prompt(); strings.Contains(p, "Rule one") || !strings.Contains(p, "Rule two") {
		t.Fatalf("after forget by command, prompt:\n%s", p)
	}
	cli, err := sqlite.Open(ctx, e.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Memories.Forget(ctx, memory.ServerOwner("g1"), []int64{two.ID}, memory.ActorCLI, "cli"); err != nil {
		t.Fatal(err)
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	if p := prompt(); strings.Contains(p, "Rule two") {
		t.Fatalf("after forget by the CLI, prompt:\n%s", p)
	}
}

// The pinned cache still spares the listing when nothing changed.
func TestPinnedCacheServesUnchanged(t *testing.T) {
	e, cs := countingEnv(t)
	e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rule one: be kind", Pinned: true})
	for range 3 {
		e.turn(e.guild("hello"))
	}
	if n := cs.snapshot()["List"]; n != 1 {
		t.Fatalf("pinned memories listed %d times over 3 unchanged turns, want 1", n)
	}
	e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rule two: no spoilers", Pinned: true})
	e.turn(e.guild("hello"))
	if n := cs.snapshot()["List"]; n != 2 {
		t.Fatalf("pinned memories listed %d times after a change, want 2", n)
	}
}

// The server-memory permission of the request reaches the model's tools.
func TestServerEditorReachesTools(t *testing.T) {
	for _, editor := range []bool{false, true} {
		t.Run(fmt.Sprint("editor=", editor), func(t *testing.T) {
			e := newEnv(t, chat.Config{})
			e.selfTeaching("g1", true)
			raid := e.remember(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The raid is on Friday",
				Provenance: memory.Provenance{AuthorID: "222"}})
			e.srv.Script(
				fakeopenai.ToolCalls(call(tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d,"memory_content":""}`, raid.ID))),
				fakeopenai.Text("ok"),
			)
			req := e.guild("forget the raid")
			req.ServerEditor = editor
			reply := e.turn(req)
			_, err := e.store.Memories.Get(context.Background(), memory.ServerOwner("g1"), raid.ID)
			gone := memory.ErrorCode(err) == memory.ENOTFOUND
			if gone != editor || (len(reply.Notices) == 1) != editor {
				t.Fatalf("editor=%v: forgotten=%v, notices %+v", editor, gone, reply.Notices)
			}
			if !editor {
				res := toolResults(e.lastChat())
				if len(res) != 1 || !strings.Contains(res[0].Content, "only its author") {
					t.Fatalf("tool result = %+v, want the refusal", res)
				}
			}
		})
	}
}

// TestSettingsSentWithRequestAreNotReadAgain: the transport reads the author's and the
// guild's settings before the turn (privacy, auto-reply channels, the editor role) and
// sends them with the request; the turn uses those and reads neither row again. Without
// them the turn reads each once.
func TestSettingsSentWithRequestAreNotReadAgain(t *testing.T) {
	ctx := context.Background()
	e, cs := countingEnv(t)
	e.srv.Script(fakeopenai.Text("Hi!"), fakeopenai.Text("Hi again!"))

	e.turn(e.guild("hello"))
	if got := cs.snapshot(); got["UserSettings"] != 1 || got["GuildSettings"] != 1 {
		t.Fatalf("a request without settings read user settings %d times and guild settings %d times, want 1 and 1",
			got["UserSettings"], got["GuildSettings"])
	}

	speaker, err := e.store.Settings.UserSettings(ctx, "111")
	if err != nil {
		t.Fatal(err)
	}
	guild, err := e.store.Settings.GuildSettings(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	req := e.guild("hello again")
	req.Speaker, req.Guild = &speaker, &guild
	before := cs.snapshot()
	if reply := e.turn(req); reply.Text != "Hi again!" {
		t.Fatalf("reply %q", reply.Text)
	}
	after := cs.snapshot()
	if after["UserSettings"] != before["UserSettings"] || after["GuildSettings"] != before["GuildSettings"] {
		t.Errorf("a request with settings read user settings %d times and guild settings %d times, want none",
			after["UserSettings"]-before["UserSettings"], after["GuildSettings"]-before["GuildSettings"])
	}
}
