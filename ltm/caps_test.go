package ltm_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// wantLimit fails unless err is the ELIMIT refusal whose message contains each of wants.
func wantLimit(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if code := memory.ErrorCode(err); code != memory.ELIMIT {
		t.Fatalf("%s: error %v (code %q), want %s", what, err, code, memory.ELIMIT)
	}
	for _, w := range wants {
		if msg := memory.ErrorMessage(err); !strings.Contains(msg, w) {
			t.Errorf("%s: message %q, want it to contain %q", what, msg, w)
		}
	}
}

// liveTotal is the live memories of owner counted from the rows, and the count the caps use;
// the test fails when they differ.
func liveTotal(t *testing.T, s *ltm.Store, owner memory.Owner) int {
	t.Helper()
	_, total, err := s.Memories.List(t.Context(), owner, memory.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	counted, err := s.Memories.LiveCount(t.Context(), owner)
	if err != nil {
		t.Fatal(err)
	}
	if counted != total {
		t.Fatalf("%s holds %d live memories, but the cap counts %d", owner.Key(), total, counted)
	}
	return total
}

func serverMemory(guild, content string) memory.Memory {
	return memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content, Source: memory.SourceCommand}
}

func TestMemoryCaps(t *testing.T) {
	t.Run("ServerCapRefusesTheWriteAndKeepsEverything", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxServerMemories = 3
		ctx := t.Context()
		g := memory.ServerOwner("g1")
		w := memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: "c1"}
		var ids []int64
		for i := range 3 {
			res, err := s.Memories.RememberAs(ctx, w, serverMemory("g1", fmt.Sprintf("Server fact number %d", i)), "test")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Memory.ID)
		}
		_, err := s.Memories.RememberAs(ctx, w, serverMemory("g1", "One fact too many"), "test")
		wantLimit(t, "fourth save", err, "This server has reached its limit of 3 memories; forget some first.")
		if n := liveTotal(t, s, g); n != 3 {
			t.Fatalf("%d live memories after a refused save, want the 3 saved", n)
		}
		// Saving what is already there is no new memory, so the cap does not stand in the way.
		res, err := s.Memories.RememberAs(ctx, w, serverMemory("g1", "server fact number 1."), "test")
		if err != nil || res.Created || res.Memory.ID != ids[1] {
			t.Fatalf("re-saving a known memory at the cap: %+v %v", res, err)
		}
		// Another server has its own cap.
		if _, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: "u1", GuildID: "g2"}, serverMemory("g2", "Another server's fact"), "test"); err != nil {
			t.Fatalf("another server refused: %v", err)
		}

		if _, err := s.Memories.Forget(ctx, g, ids[:1], "test", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Memories.RememberAs(ctx, w, serverMemory("g1", "Room made by forgetting"), "test"); err != nil {
			t.Fatalf("save after forgetting one: %v", err)
		}
		_, err = s.Memories.RecoverAs(ctx, w, g, ids[0], 0, "test")
		wantLimit(t, "recover at the cap", err, "limit of 3")
		_, err = s.Memories.UndoAs(ctx, w, g, ids[0], 0, "test")
		wantLimit(t, "undoing a forget at the cap", err, "limit of 3")
		if n := liveTotal(t, s, g); n != 3 {
			t.Fatalf("%d live memories, want 3", n)
		}
		if m, err := s.Memories.Get(ctx, g, ids[2]); err != nil || m.Content != "Server fact number 2" {
			t.Fatalf("an old memory changed at the cap: %+v %v", m, err)
		}
	})

	t.Run("MemberCapCoversEveryOrigin", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxMemberMemories = 2
		ctx := t.Context()
		me := memory.PersonalOwner("u1")
		for i, origin := range []string{"g1", ""} {
			m := memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: origin, Content: fmt.Sprintf("My fact number %d", i)}
			if _, err := s.Memories.Remember(ctx, m, "test"); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g2", Content: "A third fact"}, "test")
		wantLimit(t, "third personal save", err, "a member can keep at most 2 memories")
		if _, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopePersonal, UserID: "u2", Content: "Someone else's fact"}, "test"); err != nil {
			t.Fatalf("another member refused: %v", err)
		}
		if n := liveTotal(t, s, me); n != 2 {
			t.Fatalf("%d live memories, want 2", n)
		}
	})

	t.Run("ConcurrentWritersCannotOvershoot", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxServerMemories = 5
		ctx := t.Context()
		var (
			wg               sync.WaitGroup
			mu               sync.Mutex
			created, refused int
			unexpected       []error
		)
		for i := range 20 {
			wg.Go(func() {
				w := memory.WriteContext{WriterID: fmt.Sprint("u", i), GuildID: "g1"}
				_, err := s.Memories.RememberAs(ctx, w, serverMemory("g1", fmt.Sprintf("Racing fact number %d", i)), "test")
				mu.Lock()
				defer mu.Unlock()
				switch memory.ErrorCode(err) {
				case "":
					created++
				case memory.ELIMIT:
					refused++
				default:
					unexpected = append(unexpected, err)
				}
			})
		}
		wg.Wait()
		if len(unexpected) > 0 || created != 5 || refused != 15 {
			t.Fatalf("created %d, refused %d, other errors %v; want 5 and 15", created, refused, unexpected)
		}
		if n := liveTotal(t, s, memory.ServerOwner("g1")); n != 5 {
			t.Fatalf("%d live memories, want 5", n)
		}
	})

	t.Run("ImportOverTheCapWritesNothing", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxServerMemories = 5
		ctx := t.Context()
		g := memory.ServerOwner("g1")
		for i := range 3 {
			testkit.MustRemember(t, s, serverMemory("g1", fmt.Sprintf("Existing fact number %d", i)))
		}
		file := func(contents ...string) memory.ExportFile {
			f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer, GuildID: "g9"}
			for _, c := range contents {
				f.Memories = append(f.Memories, memory.ExportMemory{Type: memory.TypeFact, Content: c})
			}
			return f
		}
		_, err := s.Transfer.Import(ctx, g, file("New fact A", "New fact B", "New fact C"), "cli")
		wantLimit(t, "import of 3 into 3 of 5", err, "Adding 3 new memories would bring this server to 6, over its limit of 5 memories (it holds 3)", "Nothing was imported.")
		if n := liveTotal(t, s, g); n != 3 {
			t.Fatalf("%d live memories after a refused import, want 3", n)
		}
		// Memories already there, and repeats within the file, take no place.
		res, err := s.Transfer.Import(ctx, g, file("New fact A", "existing fact number 0", "New fact B", "new fact a"), "cli")
		if err != nil || res.Created != 2 || res.Duplicates != 2 {
			t.Fatalf("import filling the cap exactly: %+v %v", res, err)
		}
		if n := liveTotal(t, s, g); n != 5 {
			t.Fatalf("%d live memories, want 5", n)
		}
	})

	t.Run("PipelineProposalIsBlockedWithTheReason", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxServerMemories = 1
		g := memory.ServerOwner("g1")
		testkit.MustRemember(t, s, serverMemory("g1", "The only fact there is room for"))
		out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 4, Proposals: []memory.Proposal{
			addProposal(g, "Movie night is on Saturdays", map[string]any{"job": 1, "fact": 0}),
		}})
		if out[0].Action != memory.ActionBlock || !strings.Contains(out[0].Note, "limit of 1 memories") {
			t.Fatalf("outcome %+v, want blocked by the cap", out[0])
		}
		var blocked *memory.HistoryEvent
		for _, ev := range scopeHistory(t, s, g) {
			if ev.Action == memory.ActionBlock {
				blocked = &ev
			}
		}
		if blocked == nil || blocked.NewContent != "Movie night is on Saturdays" || !strings.Contains(string(blocked.Metadata), "limit of 1 memories") {
			t.Fatalf("history of the blocked proposal: %+v", blocked)
		}
		if cur, err := s.Transcripts.ExtractionCursor(t.Context(), "g1", "c1"); err != nil || cur != 4 {
			t.Fatalf("cursor %d %v: the batch should commit with the proposal blocked", cur, err)
		}
		if n := liveTotal(t, s, g); n != 1 {
			t.Fatalf("%d live memories, want 1", n)
		}
	})

	t.Run("NegativeMeansNoCap", func(t *testing.T) {
		s := testkit.MustOpenStore(t)
		s.MaxMemberMemories = -1
		for i := range 3 {
			testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", Content: fmt.Sprintf("Uncapped fact %d", i)})
		}
	})
}

// TestMemoryCountsFollowEveryPath: the live counts the caps read are kept by triggers, so
// they stay equal to the rows through every way a memory comes and goes: saves, bulk
// imports, forget, recover, the pipeline, retention, a server's purge and forget-me.
func TestMemoryCountsFollowEveryPath(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	clock := testkit.NewClock(s.Now())
	s.Now = clock.Now
	g1, g2, alice := memory.ServerOwner("g1"), memory.ServerOwner("g2"), memory.PersonalOwner("alice")
	check := func(step string, want map[memory.Owner]int) {
		t.Helper()
		for o, n := range want {
			if got := liveTotal(t, s, o); got != n {
				t.Fatalf("after %s: %s holds %d live memories, want %d", step, o.Key(), got, n)
			}
		}
	}
	a := testkit.MustRemember(t, s, serverMemory("g1", "Guild one fact A"))
	testkit.MustRemember(t, s, serverMemory("g1", "Guild one fact B"))
	testkit.MustRemember(t, s, serverMemory("g2", "Guild two fact"))
	testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "alice", GuildID: "g1", Content: "Alice likes tea"})
	if _, err := s.Transfer.RememberMany(ctx, []memory.Memory{serverMemory("g1", "Bulk fact"), serverMemory("g2", "Bulk fact")}, "test"); err != nil {
		t.Fatal(err)
	}
	check("saves", map[memory.Owner]int{g1: 3, g2: 2, alice: 1})

	if _, err := s.Memories.Forget(ctx, g1, []int64{a.ID}, "test", ""); err != nil {
		t.Fatal(err)
	}
	check("forget", map[memory.Owner]int{g1: 2})
	if _, err := s.Memories.Recover(ctx, g1, a.ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	check("recover", map[memory.Owner]int{g1: 3})
	out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 1, Proposals: []memory.Proposal{
		addProposal(g1, "A pipeline fact", nil),
		{Action: memory.ProposeDelete, Owner: g1, TargetID: a.ID, Reason: "gone", MayEditServer: true},
	}})
	if out[0].Action != memory.ActionCreate || out[1].Action != memory.ActionDelete {
		t.Fatalf("pipeline outcomes %+v", out)
	}
	check("the pipeline", map[memory.Owner]int{g1: 3})

	clock.Advance(s.RecoverWindow + 24*time.Hour)
	if _, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{}); err != nil {
		t.Fatal(err)
	}
	check("retention", map[memory.Owner]int{g1: 3, g2: 2})
	if _, err := s.Guilds.PurgeGuild(ctx, "g2"); err != nil {
		t.Fatal(err)
	}
	check("a server's purge", map[memory.Owner]int{g1: 3, g2: 0, alice: 1})
	sum, err := s.Confirmations.PreviewForgetMe(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirmations.ConfirmForgetMe(ctx, "alice", sum.Token); err != nil {
		t.Fatal(err)
	}
	check("forget-me", map[memory.Owner]int{g1: 3, alice: 0})
}
