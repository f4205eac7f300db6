package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// WordCompany is the store's count of words that travel together: what a question's words
// reach (Recall.Associated) and the check of the counts against the live memories
// (Maintenance.CheckWordCompany).
type WordCompany interface {
	Associated(ctx context.Context, q memory.SearchQuery) ([]string, error)
}

// WordCompanyCheck counts what waits to be counted and compares the stored counts with a
// count made afresh.
type WordCompanyCheck interface {
	FlushWordCompany(ctx context.Context) error
	CheckWordCompany(ctx context.Context) (maintenance.WordCompanyReport, error)
}

func wordCompanyOf(t *testing.T, s Stores) (WordCompany, WordCompanyCheck) {
	t.Helper()
	wc, ok := s.Recall.(WordCompany)
	if !ok {
		t.Fatal("the store's Recall does not say which words travel together (Associated)")
	}
	check, ok := s.Repairs.(WordCompanyCheck)
	if !ok {
		t.Fatal("the store's Repairs cannot check the word company (CheckWordCompany)")
	}
	return wc, check
}

// noDrift counts what waits and fails unless the stored counts are what the live memories
// give.
func noDrift(t *testing.T, check WordCompanyCheck, after string) maintenance.WordCompanyReport {
	t.Helper()
	if err := check.FlushWordCompany(t.Context()); err != nil {
		t.Fatal(err)
	}
	rep, err := check.CheckWordCompany(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Drift != 0 {
		t.Errorf("after %s the word company drifted from the live memories: %+v", after, rep)
	}
	return rep
}

// testWordCompany: the words of one memory are counted together within its scope and its
// origin channel; a question reaches the words that travel with its own only through the
// memories its asker may see (no hidden channel, no other member's personal memory, no
// other origin guild); and every write (remember in a place, import, edit of the words or of
// the channel, forget, recover, undo, the pipeline, forget-me, guild purge) keeps the counts
// what the live memories give.
func testWordCompany(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Repairs == nil {
		t.Skip("the store has no maintenance")
	}
	wc, check := wordCompanyOf(t, s)
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	in := func(channel, content string) *memory.Memory {
		t.Helper()
		m := server("g1", content)
		m.Provenance.ChannelID = channel
		res, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: channel}, m, "test")
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	in("open", "Catan board night on Friday")
	in("open", "Friday means Catan again")
	snacks := in("open", "Kenji brings Catan snacks")
	in("staff", "Friday zeppelin rehearsal")
	in("staff", "zeppelin tickets booked for Friday")
	// Another member's personal memories and a personal memory from another server.
	mustRemember(t, s, personal("u2", "g1", "Friday quokka parade"))
	mustRemember(t, s, personal("u2", "g1", "quokka photos every Friday"))
	mustRemember(t, s, personal("u1", "g2", "Friday walrus meetup"))
	mustRemember(t, s, personal("u1", "g2", "walrus costume for Friday"))
	noDrift(t, check, "the writes")

	open1 := &memory.Audience{Channels: map[string]bool{"open": true}}
	both := &memory.Audience{Channels: map[string]bool{"open": true, "staff": true}}
	ask := func(q memory.SearchQuery) []string {
		t.Helper()
		q.Text = "what is on Friday?"
		words, err := wc.Associated(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return words
	}
	u1here := memory.Visible{Owner: memory.PersonalOwner("u1"), OriginGuildID: "g1"}
	for _, c := range []struct {
		name       string
		q          memory.SearchQuery
		want, none []string
	}{
		{"OpenChannel", memory.SearchQuery{Owners: []memory.Owner{g1}, Visible: []memory.Visible{u1here}, Audience: open1},
			[]string{"catan"}, []string{"zeppelin", "quokka", "walrus"}},
		{"BothChannels", memory.SearchQuery{Owners: []memory.Owner{g1}, Audience: both},
			[]string{"catan", "zeppelin"}, []string{"quokka", "walrus"}},
		{"OwnOtherServer", memory.SearchQuery{Owners: []memory.Owner{memory.PersonalOwner("u1")}},
			[]string{"walrus"}, []string{"catan", "zeppelin", "quokka"}},
		{"OwnThisServerOnly", memory.SearchQuery{Visible: []memory.Visible{u1here}},
			nil, []string{"walrus", "catan", "zeppelin", "quokka"}},
	} {
		got := ask(c.q)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %q reaches %v, want %q among them", c.name, "what is on Friday?", got, w)
			}
		}
		for _, w := range c.none {
			if slices.Contains(got, w) {
				t.Errorf("%s: %q reaches %v: %q comes from memories the asker may not see", c.name, "what is on Friday?", got, w)
			}
		}
	}
	// Recall with the expansion finds a memory that holds none of the question's words,
	// through the word that travels with them, and never one the asker may not see.
	res, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "who brings snacks on Friday?", Owners: []memory.Owner{g1},
		Audience: open1, KeywordOnly: true, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Memory.Provenance.ChannelID == "staff" {
			t.Errorf("recall in the open channel returned #%d from the staff channel", r.Memory.ID)
		}
	}

	// Edits of the words and of the channel, forget, recover and undo keep the counts true.
	text := "Kenji brings zeppelin snacks"
	if _, err := s.Memories.Modify(ctx, g1, snacks.ID, memory.Change{Content: &text}, "test"); err != nil {
		t.Fatal(err)
	}
	noDrift(t, check, "an edit of the words")
	staff := "staff"
	if _, err := s.Memories.ModifyAs(ctx, memory.WriteContext{WriterID: "u1", GuildID: "g1", ChannelID: "staff"}, g1, snacks.ID,
		memory.Change{ChannelID: &staff}, "test"); err != nil {
		t.Fatal(err)
	}
	noDrift(t, check, "a move to another channel")
	mustForget(t, s, g1, snacks.ID)
	noDrift(t, check, "a forget")
	if got := ask(memory.SearchQuery{Owners: []memory.Owner{g1}, Audience: both}); slices.Contains(got, "kenji") {
		t.Errorf("a forgotten memory's word is still reached: %v", got)
	}
	recovered, err := s.Memories.Recover(ctx, g1, snacks.ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	noDrift(t, check, "a recover")
	if _, err := s.Memories.Undo(ctx, g1, snacks.ID, recovered.Version, "test"); err != nil {
		t.Fatal(err)
	}
	noDrift(t, check, "an undo")
	if s.Facts != nil {
		mustApply(t, s.Facts, memory.PipelineBatch{GuildID: "g1", ChannelID: "open", CursorTo: 1,
			Proposals: []memory.Proposal{addProposal(g1, "Kenji hosts Catan on Friday", nil)}})
		noDrift(t, check, "a pipeline add")
	}

	// Forget-me takes a member's words out of the counts; a guild purge takes the guild's.
	preview, err := s.ForgetMe.PreviewForgetMe(ctx, "u2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForgetMe.ConfirmForgetMe(ctx, "u2", preview.Token); err != nil {
		t.Fatal(err)
	}
	noDrift(t, check, "forget-me")
	if got := ask(memory.SearchQuery{Owners: []memory.Owner{memory.PersonalOwner("u2")}}); len(got) != 0 {
		t.Errorf("after forget-me the member's words still reach %v", got)
	}
	if s.Guilds == nil {
		return
	}
	if _, err := s.Guilds.PurgeGuild(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	rep := noDrift(t, check, "a guild purge")
	if got := ask(memory.SearchQuery{Owners: []memory.Owner{g1}, Audience: both}); len(got) != 0 {
		t.Errorf("after the guild purge its words still reach %v", got)
	}
	// What is left is u1's personal memories from g2: two memories.
	if rep.Memories != 2 {
		t.Errorf("after the purge %d memories are counted, want the 2 from the other server", rep.Memories)
	}
}

// testWordCompanyBackfill: memories written before the counts existed are counted by a
// resumable backfill, which leaves a memory a write already counted as it is.
func testWordCompanyBackfill(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Repairs == nil || s.Exec == nil {
		t.Skip("the store has no repairs")
	}
	_, check := wordCompanyOf(t, s)
	ctx := t.Context()
	backfillMemories(t, s, "Catan night on Friday", "Friday means Catan", "Aiko prefers green tea",
		"Kenji hosts board games", "Ren rides a red bicycle")
	// The writes are counted before the counts are emptied: counting that ran after would
	// leave records an older version never wrote.
	if err := check.FlushWordCompany(ctx); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		// What a database an older version wrote looks like after the migration.
		`DELETE FROM comentions`,
		`DELETE FROM comention_memories`,
		`UPDATE store_repairs SET cursor = 0, done_at = NULL WHERE name = '` + ltm.RepairComentions + `'`,
	} {
		if err := s.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if rep, err := check.CheckWordCompany(ctx); err != nil || rep.Drift == 0 {
		t.Fatalf("before the backfill: %+v, %v; want drift", rep, err)
	}
	// A write between the two runs counts its own memory.
	rep := interruptAndResume(t, s, 2, func() { mustRemember(t, s, server("g1", "Catan expansion arrives Friday")) })
	// The first run counted two memories; the second the other two live ones written before.
	if rep.Comentions != 2 || !slices.Contains(rep.Finished, ltm.RepairComentions) {
		t.Errorf("resumed backfill report %+v, want 2 memories counted and %s finished", rep, ltm.RepairComentions)
	}
	if got := noDrift(t, check, "the backfill"); got.Memories != 5 {
		t.Errorf("after the backfill %d memories are counted, want the 5 live ones", got.Memories)
	}
}
