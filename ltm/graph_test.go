package ltm_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

func entityNames(t *testing.T, s *ltm.Store, owner memory.Owner, id int64) []string {
	t.Helper()
	ns, err := s.Graph.MemoryEntities(t.Context(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func topMentions(t *testing.T, s *ltm.Store, owner memory.Owner) map[string]int {
	t.Helper()
	top, err := s.Graph.TopEntities(t.Context(), owner, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, n := range top {
		out[n.Name] = n.Mentions
	}
	return out
}

func mustRemember(t *testing.T, s *ltm.Store, m memory.Memory) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), m, memory.UserActor("1"))
	if err != nil || !res.Created {
		t.Fatalf("remember %q: %v (created %v)", m.Content, err, res.Created)
	}
	return res.Memory
}

func TestGraphLinksOnWrite(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	m := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Kate said Bill is hosting the Minecraft server, details in #events"})
	if got, want := entityNames(t, s, g, m.ID), []string{"#events", "Katherine", "Minecraft", "William"}; !slices.Equal(got, want) {
		t.Fatalf("linked %v, want %v", got, want)
	}

	t.Run("ModifyRelinks", func(t *testing.T) {
		content := "Kate moved to Osaka"
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Content: &content}, memory.UserActor("1")); err != nil {
			t.Fatal(err)
		}
		if got, want := entityNames(t, s, g, m.ID), []string{"Katherine", "Osaka"}; !slices.Equal(got, want) {
			t.Fatalf("after the edit linked %v, want %v", got, want)
		}
		pin := true
		if _, err := s.Memories.Modify(ctx, g, m.ID, memory.Change{Pinned: &pin}, memory.UserActor("1")); err != nil {
			t.Fatal(err)
		}
		if got := topMentions(t, s, g); got["Katherine"] != 1 || got["Osaka"] != 1 {
			t.Errorf("a change that keeps the content changed the mentions: %v", got)
		}
	})
	t.Run("OrphansCollected", func(t *testing.T) {
		if got := topMentions(t, s, g); len(got) != 2 {
			t.Errorf("entities still mentioned: %v, want Katherine and Osaka", got)
		}
		n, err := s.Graph.CollectOrphans(ctx, 0)
		if err != nil || n != 3 {
			t.Fatalf("collected %d entities (%v), want William, Minecraft and #events", n, err)
		}
		if _, err := s.Graph.Neighbourhood(ctx, g, "Bill"); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Errorf("Bill after collection: %v", err)
		}
	})
	t.Run("ImportLinks", func(t *testing.T) {
		res, err := s.Transfer.RememberMany(ctx, []memory.Memory{
			{Scope: memory.ScopeServer, GuildID: "g1", Content: "Katie loves Valheim"},
			{Scope: memory.ScopeServer, GuildID: "g1", Content: "Katherine lives in Osaka"},
		}, memory.UserActor("1"))
		if err != nil || res.Created != 2 {
			t.Fatalf("%+v %v", res, err)
		}
		if got := topMentions(t, s, g); got["Katherine"] != 3 || got["Osaka"] != 2 || got["Valheim"] != 1 {
			t.Errorf("mentions after the import: %v", got)
		}
	})
}

func TestGraphAliases(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	for _, c := range []string{"Katia runs the art channel", "Katya posted new sketches", "Yekaterina is away this week"} {
		mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c})
	}
	nb, err := s.Graph.Neighbourhood(ctx, g, "Katya")
	if err != nil {
		t.Fatal(err)
	}
	if nb.Entity.Name != "Ekaterina" || nb.Entity.Mentions != 3 || len(nb.Memories) != 3 {
		t.Errorf("Katia, Katya and Yekaterina: %+v, want one entity mentioned by three memories", nb)
	}
	for _, a := range []string{"katia", "katya", "yekaterina", "ekaterina"} {
		if !slices.Contains(nb.Aliases, a) {
			t.Errorf("aliases %v lack %q", nb.Aliases, a)
		}
	}
	// A spelling variant the nickname table does not know joins the person it resembles.
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Thanks Marisol for the cookies"})
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Thanks Marisel for the cake"})
	if nb, err := s.Graph.Neighbourhood(ctx, g, "Marisol"); err != nil || nb.Entity.Mentions != 2 {
		t.Errorf("Marisol and Marisel: %+v %v", nb, err)
	}
	// A display name ties the author's mentions to their user id.
	m := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kuro will stream on Friday",
		Provenance: memory.Provenance{AuthorID: "77", Author: "Kuro"}})
	ns, err := s.Graph.MemoryEntities(ctx, g, m.ID)
	if err != nil || len(ns) != 1 || ns[0].UserID != "77" || ns[0].Kind != graph.KindPerson {
		t.Errorf("the author's name: %+v %v", ns, err)
	}
}

func TestGraphScopeIsolation(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	a := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kate leads Project Falcon"})
	b := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Kate plays Valheim"})
	p := mustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1", Content: "Kate is my sister"})
	if _, err := s.Graph.MemoryEntities(ctx, memory.ServerOwner("g2"), a.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("g1's memory from g2: %v", err)
	}
	for owner, want := range map[memory.Owner][]int64{
		memory.ServerOwner("g1"): {a.ID}, memory.ServerOwner("g2"): {b.ID}, memory.PersonalOwner("u1"): {p.ID},
	} {
		nb, err := s.Graph.Neighbourhood(ctx, owner, "Kate")
		if err != nil || !slices.Equal(nb.Memories, want) {
			t.Errorf("Kate in %s: %+v %v, want memories %v", owner, nb, err, want)
		}
	}
	if _, err := s.Graph.Neighbourhood(ctx, memory.ServerOwner("g2"), "Falcon"); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("g1's project seen from g2: %v", err)
	}
}

func TestDecisionProtectionOnWrite(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	m := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "We decided to switch from Jira to Linear"})
	if m.Type != memory.TypeDecision || m.Importance != graph.DecisionImportance {
		t.Errorf("decision stored as %s with importance %v", m.Type, m.Importance)
	}
	hist, err := s.Memories.History(ctx, g, m.ID)
	if err != nil || len(hist) != 1 || string(hist[0].Metadata) != `{"decision":true}` {
		t.Errorf("creation history %+v %v, want the decision noted", hist, err)
	}
	pref := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Type: memory.TypePreference,
		Content: "Everyone prefers tabs over spaces", Importance: 0.9})
	if pref.Type != memory.TypePreference || pref.Importance != 0.9 {
		t.Errorf("an explicit type and a higher importance must stay: %s %v", pref.Type, pref.Importance)
	}
	plain := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Have we decided on a venue?"})
	if plain.Type != memory.TypeFact || plain.Importance != memory.DefaultImportance {
		t.Errorf("a question was protected: %s %v", plain.Type, plain.Importance)
	}
	res, err := s.Transfer.RememberMany(ctx, []memory.Memory{{Scope: memory.ScopeServer, GuildID: "g1", Content: "来週の飲み会は金曜日にしよう"}},
		memory.UserActor("1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Memories.Get(ctx, g, res.IDs[0]); err != nil || got.Type != memory.TypeDecision || got.Importance != graph.DecisionImportance {
		t.Errorf("bulk write of a Japanese decision: %+v %v", got, err)
	}
}

func TestGraphRetention(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s.Now = clock.Now
	g := memory.ServerOwner("g1")
	gone := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Bill hosts the Valheim server"})
	kept := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Bill moved to Osaka"})
	if _, err := s.Memories.Forget(ctx, g, []int64{gone.ID}, memory.UserActor("1"), ""); err != nil {
		t.Fatal(err)
	}
	// Within the recover window the tombstone keeps its links, so recovery loses nothing.
	res, err := s.Maintenance.Retention(ctx, memory.RetentionPolicy{})
	if err != nil || res.GraphLinks != 0 || res.Entities != 0 {
		t.Fatalf("retention inside the recover window: %+v %v", res, err)
	}
	clock.Advance(s.RecoverWindow + time.Hour)
	res, err = s.Maintenance.Retention(ctx, memory.RetentionPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if res.GraphLinks != 2 || res.Tombstones != 1 || res.Entities != 1 {
		t.Errorf("retention %+v, want the tombstone's 2 links, the tombstone and the Valheim entity", res)
	}
	if got := topMentions(t, s, g); !sameCounts(got, map[string]int{"William": 1, "Osaka": 1}) {
		t.Errorf("entities after retention: %v", got)
	}
	if got := entityNames(t, s, g, kept.ID); !slices.Equal(got, []string{"Osaka", "William"}) {
		t.Errorf("the live memory's links: %v", got)
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestGraphTriples(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	people := []graph.Person{{UserID: "u1", Name: "Alice"}, {UserID: "u2", Name: "Bob"}, {UserID: "u3", Name: "Carol"}}
	if err := s.Settings.SetPrivacy(ctx, "u3", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	n, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: g, People: people, Sources: []string{"u1", "u2"}, Triples: []graph.Triple{
		{Source: "Alice", Relationship: "Leads", Target: "Project Falcon", Confidence: 0.9},
		{Source: "Bob", Relationship: "plays", Target: "Valheim", Confidence: 0.7},
		{Source: "Carol", Relationship: "likes", Target: "green tea", Confidence: 0.9},
		{Source: "Alice", Relationship: "is", Target: "Alice", Confidence: 0.9},
		{Source: " ", Relationship: "knows", Target: "Bob", Confidence: 0.9},
	}})
	if err != nil || n != 2 {
		t.Fatalf("recorded %d (%v), want Alice's and Bob's (Carol's privacy is partial; the rest are not relations)", n, err)
	}
	nb, err := s.Graph.Neighbourhood(ctx, g, "Alice")
	if err != nil || nb.Entity.UserID != "u1" || len(nb.Relations) != 1 || nb.Relations[0].Type != "leads" {
		t.Fatalf("Alice: %+v %v", nb, err)
	}
	if _, err := s.Graph.Neighbourhood(ctx, g, "Carol"); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("Carol's triple was recorded: %v", err)
	}

	t.Run("FencedSpeakerWritesNothing", func(t *testing.T) {
		started := s.Now().Add(-time.Minute)
		if err := s.Memories.FenceForgotten(ctx, "u2"); err != nil {
			t.Fatal(err)
		}
		n, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: g, People: people, Sources: []string{"u1", "u2"}, StartedAt: started,
			Triples: []graph.Triple{{Source: "Alice", Relationship: "uses", Target: "Postgres", Confidence: 0.9}}})
		if err != nil || n != 0 {
			t.Errorf("a batch whose speaker was forgotten since it started recorded %d (%v)", n, err)
		}
	})
	t.Run("BadScope", func(t *testing.T) {
		if _, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: memory.Owner{Scope: memory.ScopeServer},
			Triples: []graph.Triple{{Source: "a", Relationship: "b", Target: "c"}}}); memory.ErrorCode(err) != memory.EINVALID {
			t.Errorf("a batch without a guild: %v", err)
		}
	})
}

// TestGraphForgetMe checks what forget-me takes from the graph, through the store's reads:
// the member's entity in every scope (with its links from memories that stay), their
// personal graph, relations learned only from them, and what this leaves unmentioned.
func TestGraphForgetMe(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	people := []graph.Person{{UserID: "u1", Name: "Alice"}, {UserID: "u2", Name: "Bob"}}
	stays := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Ask <@u1> about the Falcon repo",
		Provenance: memory.Provenance{AuthorID: "u2", Author: "Bob"}})
	mustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", Content: "Zanzibar is my cat's name"})
	for _, b := range []graph.Batch{
		{Owner: g, People: people, Sources: []string{"u1"}, Triples: []graph.Triple{{Source: "Alice", Relationship: "mentors", Target: "Bob"},
			{Source: "Quillfeather", Relationship: "sponsors", Target: "the bake sale"}}},
		{Owner: g, People: people, Sources: []string{"u1", "u2"}, Triples: []graph.Triple{{Source: "Bob", Relationship: "plays", Target: "Valheim"}}},
	} {
		if _, err := s.Graph.AddTriples(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	preview, err := s.Confirmations.PreviewForgetMe(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirmations.ConfirmForgetMe(ctx, "u1", preview.Token); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, s, g, stays.ID); !slices.Equal(got, []string{"Falcon"}) {
		t.Errorf("the memory that stays still links %v, want only Falcon", got)
	}
	for _, name := range []string{"Alice", "Quillfeather", "the bake sale"} {
		if _, err := s.Graph.Neighbourhood(ctx, g, name); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Errorf("%s is still in the guild's graph: %v", name, err)
		}
	}
	if top, err := s.Graph.TopEntities(ctx, memory.PersonalOwner("u1"), 10); err != nil || len(top) != 0 {
		t.Errorf("the member's personal graph: %v %v", top, err)
	}
	// Bob's relation was learned from both of them: it stays, without Alice as a source.
	nb, err := s.Graph.Neighbourhood(ctx, g, "Bob")
	if err != nil || len(nb.Relations) != 1 || nb.Relations[0].Type != "plays" {
		t.Errorf("Bob after Alice's forget-me: %+v %v", nb, err)
	}
	raw, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(s.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM relation_sources WHERE user_id = 'u1'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("relation sources naming the member: %d %v", n, err)
	}
}

func TestGuildPurgeRemovesGraph(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kate leads Project Falcon"})
	mustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "u1", GuildID: "g1", Content: "Bill owes me a Valheim rematch"})
	mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Kate plays Valheim"})
	if _, err := s.Graph.AddTriples(ctx, graph.Batch{Owner: memory.ServerOwner("g1"), Sources: []string{"u1"},
		Triples: []graph.Triple{{Source: "Kate", Relationship: "leads", Target: "Falcon"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Guilds.PurgeGuild(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Graph != 4 {
		t.Errorf("purge %+v, want the guild's 2 entities and the member's 2 it left unmentioned", res)
	}
	for _, owner := range []memory.Owner{memory.ServerOwner("g1"), memory.PersonalOwner("u1")} {
		if top := topMentions(t, s, owner); len(top) != 0 {
			t.Errorf("%s after the purge: %v", owner, top)
		}
	}
	if got := topMentions(t, s, memory.ServerOwner("g2")); got["Katherine"] != 1 || got["Valheim"] != 1 {
		t.Errorf("another guild's graph: %v", got)
	}
}

// Linking passes names to SQLite as JSON arrays (so its statements stay prepared): names
// that JSON escapes (quotes, backslashes, <, >, &) or that are not ASCII are stored and found
// as they are.
func TestGraphNamesSurviveJSON(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	author := memory.Provenance{AuthorID: "88", Author: `Zoë "Z" <\o> & 田中`}
	var ids []int64
	for _, c := range []string{"Zoë will bring the projector", "Zoë booked the room for Friday"} {
		ids = append(ids, mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: c,
			Provenance: author}).ID)
	}
	res, err := s.Transfer.RememberMany(ctx, []memory.Memory{{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Zoë is the treasurer", Provenance: author}}, memory.UserActor("1"))
	if err != nil || res.Created != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	ids = append(ids, res.IDs[0])
	var entity int64
	for _, id := range ids {
		ns, err := s.Graph.MemoryEntities(ctx, g, id)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(ns, func(n graph.Node) bool { return n.UserID == "88" })
		if i < 0 {
			t.Fatalf("memory %d links %+v: not its author", id, ns)
		}
		if ns[i].Name != author.Author {
			t.Errorf("the author's entity is named %q, want %q", ns[i].Name, author.Author)
		}
		if entity == 0 {
			entity = ns[i].ID
		} else if ns[i].ID != entity {
			t.Errorf("memory %d links the author as entity %d, the first memory as %d", id, ns[i].ID, entity)
		}
	}
	nb, err := s.Graph.Neighbourhood(ctx, g, author.Author)
	if err != nil || nb.Entity.ID != entity || nb.Entity.Mentions < len(ids) {
		t.Fatalf("looked up by its display name: %+v %v, want entity %d mentioned %d times", nb.Entity, err, entity, len(ids))
	}
}

// A bulk write analyses its memories (decisions, entities) on another core ahead of its
// batches: every batch gets its own analysis, a memory repeated in a later batch is
// stored once, and a write refused part-way keeps the batches before the refusal whole.
func TestBulkWriteAnalysesEveryBatch(t *testing.T) {
	ctx := t.Context()
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	const n = 2_205 // three batches of RememberMany
	mems := make([]memory.Memory, 0, n+1)
	decisions := 0
	for i := range n {
		content := fmt.Sprintf("Kate logged entry %d of the Falcon build", i)
		if i%100 == 7 {
			content = fmt.Sprintf("We decided to ship build %d of Falcon on Friday", i)
			decisions++
		}
		mems = append(mems, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content})
	}
	mems = append(mems, mems[3]) // the last batch repeats a memory of the first
	res, err := s.Transfer.RememberMany(ctx, mems, memory.UserActor("1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != n || res.Duplicates != 1 || res.IDs[n] != res.IDs[3] {
		t.Fatalf("created %d, duplicates %d, the repeat has id %d (first %d); want %d, 1 and the same id",
			res.Created, res.Duplicates, res.IDs[n], res.IDs[3], n)
	}
	stored, total, err := s.Memories.List(ctx, g, memory.ListOptions{Type: memory.TypeDecision, Limit: 500})
	if err != nil || total != decisions {
		t.Fatalf("%d decisions stored (%v), want %d", total, err, decisions)
	}
	for _, m := range stored {
		if m.Importance != graph.DecisionImportance || !strings.HasPrefix(m.Content, "We decided") {
			t.Errorf("stored as a decision: %q with importance %v", m.Content, m.Importance)
		}
	}
	if got := topMentions(t, s, g); got["Falcon"] != n || got["Katherine"] != n-decisions {
		t.Errorf("mentions after the bulk write: Falcon %d (want %d), Katherine %d (want %d)",
			got["Falcon"], n, got["Katherine"], n-decisions)
	}

	// A cap that refuses the second batch: the first is stored, linked, and the analysis of
	// the rest stops with the write.
	const firstBatch = 1_000 // RememberMany's batch
	s2 := testkit.MustOpenStore(t)
	s2.MaxServerMemories = 1_400
	if _, err := s2.Transfer.RememberMany(ctx, mems[:n], memory.UserActor("1")); memory.ErrorCode(err) != memory.ELIMIT {
		t.Fatalf("bulk write past the cap: %v, want a limit error", err)
	}
	if got := topMentions(t, s2, g); got["Falcon"] != firstBatch {
		t.Errorf("after the refusal Falcon has %d mentions, want the first batch's %d", got["Falcon"], firstBatch)
	}
}
