package chat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/tools"
)

// withLimits rebuilds e's engine with cfg and a daily budget of dailyCalls (0: none) counted
// in e's store on e's clock.
func withLimits(t *testing.T, e *env, cfg chat.Config, dailyCalls int) {
	t.Helper()
	cfg.Now = e.clock.Now
	if dailyCalls > 0 {
		cfg.DailyBudget = chat.NewDailyBudget(dailyCalls, e.store.Budgets, e.clock.Now)
	}
	engine, err := chat.New(cfg, chat.Deps{Memories: e.store.Memories, Duplicates: e.store.Duplicates, Recall: e.store.Recall, Transcript: e.store.Transcripts,
		Settings: e.store.Settings, ShortTerm: e.short, Model: e.model})
	if err != nil {
		t.Fatal(err)
	}
	e.engine = engine
}

// A guild over its turn rate gets a polite reply naming the server; the message is not
// kept, its author's own rate is given back, and other guilds and DMs are not affected.
func TestGuildRateLimit(t *testing.T) {
	e := newEnv(t, chat.Config{})
	withLimits(t, e, chat.Config{TurnsPerMinute: 1, GuildTurnsPerMinute: 1}, 0)
	if r := e.turn(e.guild("hello")); r.RateLimited {
		t.Fatalf("first turn of the guild refused: %+v", r)
	}
	ben := e.guild("me too")
	ben.UserID, ben.UserName = "222", "Ben"
	r := e.turn(ben)
	if !r.RateLimited || !strings.Contains(r.Text, "This server is sending me more messages than I can keep up with. Please wait about 60 seconds") {
		t.Fatalf("second turn of the guild: %+v", r)
	}
	// Transports show it in their own language from what it is and how long to wait.
	if r.Canned != chat.CannedGuildRate || r.RetryAfter <= 59*time.Second || r.RetryAfter > time.Minute {
		t.Errorf("canned = %q, retry after %s", r.Canned, r.RetryAfter)
	}
	if n := countTurns(t, e.store, "222"); n != 0 {
		t.Fatalf("%d transcript rows of a refused message, want 0", n)
	}
	// Ben's own turn was given back: with one turn a minute, his DM still goes through.
	benDM := e.dm("hello in private")
	benDM.UserID, benDM.ChannelID = "222", "dm2"
	if r := e.turn(benDM); r.RateLimited {
		t.Fatalf("the guild's refusal cost Ben his own turn: %+v", r)
	}
	other := e.guild("hello from elsewhere")
	other.GuildID, other.UserID = "g2", "333"
	if r := e.turn(other); r.RateLimited {
		t.Fatalf("another guild was limited: %+v", r)
	}
	if n := e.srv.ChatCount(); n != 3 {
		t.Fatalf("%d model calls, want 3 (the refused message asks nothing)", n)
	}
	e.clock.Advance(time.Minute)
	if r := e.turn(ben); r.RateLimited {
		t.Fatalf("still limited after a minute: %+v", r)
	}
}

// The daily model budget counts every model call of a turn (tool rounds included); once it
// is spent, a message there gets the budget reply, is not kept and asks the model nothing,
// while another guild and the member's DMs have budgets of their own. It starts afresh at
// 00:00 UTC.
func TestDailyModelBudget(t *testing.T) {
	e := newEnv(t, chat.Config{})
	e.clock.Advance(10 * time.Hour) // 22:00 UTC
	withLimits(t, e, chat.Config{}, 3)
	e.srv.Script(fakeopenai.ToolCalls(call(tools.NameSearch, `{"query":"tea"}`)), fakeopenai.Text("Nothing about tea yet."))
	if r := e.turn(e.guild("what do you know about tea?")); r.BudgetSpent || r.Usage.ModelCalls != 2 {
		t.Fatalf("first turn: %+v", r)
	}
	if r := e.turn(e.guild("and coffee?")); r.BudgetSpent {
		t.Fatalf("third call of three refused: %+v", r)
	}
	before := e.srv.ChatCount()
	rowsBefore := countTurns(t, e.store, "111")
	r := e.turn(e.guild("one more?"))
	if !r.BudgetSpent || r.Text != "This server's daily model budget is used up; it resets at 00:00 UTC." || r.Canned != chat.CannedBudgetGuild {
		t.Fatalf("turn over the budget: %+v", r)
	}
	if e.srv.ChatCount() != before || countTurns(t, e.store, "111") != rowsBefore {
		t.Fatal("a message over the budget reached the model or the transcript")
	}
	other := e.guild("hello")
	other.GuildID = "g2"
	if r := e.turn(other); r.BudgetSpent {
		t.Fatalf("another guild's budget was spent: %+v", r)
	}
	for i := range 3 {
		r := e.turn(e.dm("hi"))
		if r.BudgetSpent {
			t.Fatalf("DM turn %d refused: %+v", i+1, r)
		}
	}
	if r := e.turn(e.dm("hi again")); !r.BudgetSpent || r.Text != "Your daily model budget for DMs is used up; it resets at 00:00 UTC." {
		t.Fatalf("DM over its budget: %+v", r)
	}
	e.clock.Advance(2 * time.Hour) // 00:00 UTC
	if r := e.turn(e.guild("a new day")); r.BudgetSpent {
		t.Fatalf("the budget did not reset at midnight: %+v", r)
	}
}
