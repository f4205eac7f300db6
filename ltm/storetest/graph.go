package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// GraphStore is the knowledge graph: the entities the memories of each scope mention,
// linked when a memory is written, and the relations the pipeline's extraction records.
type GraphStore interface {
	MemoryEntities(ctx context.Context, owner memory.Owner, id int64) ([]graph.Node, error)
	Neighbourhood(ctx context.Context, owner memory.Owner, name string) (graph.Neighbourhood, error)
	TopEntities(ctx context.Context, owner memory.Owner, limit int) ([]graph.Node, error)
	AddTriples(ctx context.Context, b graph.Batch) (int, error)
	CollectOrphans(ctx context.Context, limit int) (int, error)
	MentionedWith(ctx context.Context, vis memory.Visible, entityID int64, aud *memory.Audience, limit int) ([]graph.CoMention, error)
	MemoryMentionedWith(ctx context.Context, vis memory.Visible, id int64, aud *memory.Audience, limit int) ([]graph.CoMention, error)
}

// graphOf returns the store's graph, or skips the case for a store without one.
func graphOf(t *testing.T, s Stores) GraphStore {
	t.Helper()
	if s.Graph == nil {
		t.Skip("the store has no knowledge graph")
	}
	return s.Graph
}

func linkedNames(t *testing.T, g GraphStore, owner memory.Owner, id int64) []string {
	t.Helper()
	ns, err := g.MemoryEntities(t.Context(), owner, id)
	if err != nil {
		t.Fatalf("entities of #%d: %v", id, err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

func scopeEntities(t *testing.T, g GraphStore, owner memory.Owner) []string {
	t.Helper()
	top, err := g.TopEntities(t.Context(), owner, 500)
	if err != nil {
		t.Fatalf("entities of %s: %v", owner, err)
	}
	var out []string
	for _, n := range top {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// testGraphScopeIsolation: a written memory is linked to the entities it names, in its own
// scope only; one scope's entities, relations and links are never read from another, and
// another scope's memory id is ENOTFOUND.
func testGraphScopeIsolation(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	g := graphOf(t, s)
	ctx := t.Context()
	g1, g2, u1 := memory.ServerOwner("g1"), memory.ServerOwner("g2"), memory.PersonalOwner("u1")
	a := mustRemember(t, s, server("g1", "Kate leads Project Falcon"))
	b := mustRemember(t, s, server("g2", "Kate plays Valheim on Fridays"))
	p := mustRemember(t, s, personal("u1", "g1", "Kate is visiting Osaka"))
	if _, err := g.AddTriples(ctx, graph.Batch{Owner: g1, Sources: []string{"u1"},
		Triples: []graph.Triple{{Source: "Kate", Relationship: "mentors", Target: "Bob", Confidence: 0.8}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := linkedNames(t, g, g1, a.ID), []string{"Falcon", "Katherine"}; !slices.Equal(got, want) {
		t.Errorf("g1's memory links %v, want %v", got, want)
	}
	for owner, want := range map[memory.Owner][]string{
		g1: {"Falcon", "Katherine", "Robert"}, g2: {"Katherine", "Valheim"}, u1: {"Katherine", "Osaka"},
	} {
		if got := scopeEntities(t, g, owner); !slices.Equal(got, want) {
			t.Errorf("entities of %s: %v, want %v", owner, got, want)
		}
	}
	for owner, mem := range map[memory.Owner]int64{g1: a.ID, g2: b.ID, u1: p.ID} {
		nb, err := g.Neighbourhood(ctx, owner, "kate")
		if err != nil {
			t.Fatalf("Kate in %s: %v", owner, err)
		}
		if !slices.Equal(nb.Memories, []int64{mem}) {
			t.Errorf("Kate in %s is mentioned by %v, want only #%d", owner, nb.Memories, mem)
		}
		if rels := len(nb.Relations); (owner == g1) != (rels == 1) {
			t.Errorf("Kate in %s has %d relations; only g1's graph has one", owner, rels)
		}
	}
	for _, c := range []struct {
		owner memory.Owner
		id    int64
	}{{g2, a.ID}, {g1, b.ID}, {memory.PersonalOwner("u2"), p.ID}, {g1, p.ID}} {
		_, err := g.MemoryEntities(ctx, c.owner, c.id)
		wantCode(t, err, memory.ENOTFOUND)
	}
	_, err := g.Neighbourhood(ctx, g2, "Falcon")
	wantCode(t, err, memory.ENOTFOUND)
}

// testGraphForgetMe: forget-me removes the member's person entity in every scope (found by
// user id: a Discord mention, a speaker's name), the links to it from memories that stay,
// their personal graph and the relations learned only from them; everyone else's graph stays.
func testGraphForgetMe(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	g := graphOf(t, s)
	ctx := t.Context()
	const alice, bob = "100000000000000001", "200000000000000002"
	g1 := memory.ServerOwner("g1")
	people := []graph.Person{{UserID: alice, Name: "Alice"}, {UserID: bob, Name: "Bob"}}
	stays := mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Ask <@" + alice + "> about Project Falcon",
		Provenance: memory.Provenance{AuthorID: bob, Author: "Bob"}})
	mustRemember(t, s, personal(alice, "", "My cat Zanzibar hates Mondays"))
	for _, b := range []graph.Batch{
		{Owner: g1, People: people, Sources: []string{alice}, Triples: []graph.Triple{
			{Source: "Alice", Relationship: "mentors", Target: "Bob", Confidence: 0.9},
			{Source: "Quillfeather", Relationship: "sponsors", Target: "the bake sale", Confidence: 0.9}}},
		{Owner: g1, People: people, Sources: []string{bob}, Triples: []graph.Triple{
			{Source: "Bob", Relationship: "plays", Target: "Valheim", Confidence: 0.9}}},
	} {
		if _, err := g.AddTriples(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := linkedNames(t, g, g1, stays.ID); !slices.Equal(got, []string{"Alice", "Falcon"}) {
		t.Fatalf("before forget-me the memory links %v, want Alice (by her mention) and Falcon", got)
	}
	preview, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
		t.Fatal(err)
	}
	if got := linkedNames(t, g, g1, stays.ID); !slices.Equal(got, []string{"Falcon"}) {
		t.Errorf("after forget-me the memory that stays links %v, want only Falcon", got)
	}
	if got, want := scopeEntities(t, g, g1), []string{"Bob", "Falcon", "Valheim"}; !slices.Equal(got, want) {
		t.Errorf("g1's entities after forget-me: %v, want %v", got, want)
	}
	if got := scopeEntities(t, g, memory.PersonalOwner(alice)); len(got) != 0 {
		t.Errorf("the member's personal graph after forget-me: %v", got)
	}
	nb, err := g.Neighbourhood(ctx, g1, "Bob")
	if err != nil || len(nb.Relations) != 1 || nb.Relations[0].Type != "plays" {
		t.Errorf("Bob's own relation after Alice's forget-me: %+v %v", nb.Relations, err)
	}
}

// testGraphOrphans: an entity no memory or relation mentions any more is collected; one
// still mentioned is not.
func testGraphOrphans(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	g := graphOf(t, s)
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	m := mustRemember(t, s, server("g1", "Bill hosts the Valheim server"))
	mustRemember(t, s, server("g1", "Bill moved to Osaka"))
	content := "The Valheim server moved to Tuesdays"
	if _, err := s.Memories.Modify(ctx, g1, m.ID, memory.Change{Content: &content}, "test"); err != nil {
		t.Fatal(err)
	}
	if got, want := linkedNames(t, g, g1, m.ID), []string{"Valheim"}; !slices.Equal(got, want) {
		t.Errorf("the edited memory links %v, want %v", got, want)
	}
	if got, want := scopeEntities(t, g, g1), []string{"Osaka", "Valheim", "William"}; !slices.Equal(got, want) {
		t.Errorf("mentioned entities %v, want %v", got, want)
	}
	mustForget(t, s, g1, m.ID)
	// A forgotten memory keeps its links while it can be recovered.
	if got := scopeEntities(t, g, g1); !slices.Contains(got, "Valheim") {
		t.Errorf("a forgotten memory's entity went before retention: %v", got)
	}
	if _, err := g.CollectOrphans(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Neighbourhood(ctx, g1, "Valheim"); err != nil {
		t.Errorf("an entity a forgotten memory still mentions was collected: %v", err)
	}
	if _, err := g.Neighbourhood(ctx, g1, "Bill"); err != nil {
		t.Errorf("an entity still mentioned was collected: %v", err)
	}
	// Kate is linked from nothing once her only memory changes: collected.
	k := mustRemember(t, s, server("g1", "Kate plans the picnic"))
	other := "The picnic is on Sunday"
	if _, err := s.Memories.Modify(ctx, g1, k.ID, memory.Change{Content: &other}, "test"); err != nil {
		t.Fatal(err)
	}
	n, err := g.CollectOrphans(ctx, 100)
	if err != nil || n != 1 {
		t.Errorf("collected %d entities (%v), want 1 (Katherine)", n, err)
	}
	_, err = g.Neighbourhood(ctx, g1, "Kate")
	wantCode(t, err, memory.ENOTFOUND)
}

// coMentionList renders co-mentions as "Name n" in their order, for comparison.
func coMentionList(cs []graph.CoMention) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %d", c.Node.Name, c.Count)
	}
	return strings.Join(out, ", ")
}

// testGraphMentionedWith: the entities mentioned with another are those sharing its live
// memories, counted by shared memory (most first, then name). A forgotten memory adds
// nothing, another scope's entities never appear, and under an audience a memory from a
// channel it does not allow neither lists its entities nor adds to a count; a personal
// scope narrowed to one origin guild reads only that guild's memories.
func testGraphMentionedWith(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	g := graphOf(t, s)
	ctx := t.Context()
	g1 := memory.ServerOwner("g1")
	const general, mods = "c-general", "c-mods"
	in := func(channel, content string) *memory.Memory {
		return mustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	in(general, "Kate leads Project Falcon")
	launch := in(general, "Kate and Bill plan the Project Falcon launch")
	move := in(general, "Kate moved to Osaka")
	raid := in(mods, "Kate plays Valheim with Bill")
	in("", "Kate hosts the Minecraft server")
	mustRemember(t, s, server("g2", "Kate visits Tokyo with Bill"))
	mustRemember(t, s, personal("u1", "g1", "Kate visits Tokyo in May"))

	nb, err := g.Neighbourhood(ctx, g1, "Kate")
	if err != nil {
		t.Fatal(err)
	}
	kate := nb.Entity.ID
	mentionedWith := func(vis memory.Visible, id int64, aud *memory.Audience) string {
		t.Helper()
		cs, err := g.MentionedWith(ctx, vis, id, aud, 10)
		if err != nil {
			t.Fatalf("mentioned with entity %d in %s: %v", id, vis.Owner, err)
		}
		for _, c := range cs {
			if c.Node.Mentions != 0 {
				t.Errorf("%s carries its scope-wide mention count %d", c.Node.Name, c.Node.Mentions)
			}
		}
		return coMentionList(cs)
	}
	all := memory.Visible{Owner: g1}
	if got, want := mentionedWith(all, kate, nil), "Falcon 2, William 2, Minecraft 1, Osaka 1, Valheim 1"; got != want {
		t.Errorf("Kate is mentioned with %q, want %q", got, want)
	}
	mustForget(t, s, g1, move.ID)
	if got, want := mentionedWith(all, kate, nil), "Falcon 2, William 2, Minecraft 1, Valheim 1"; got != want {
		t.Errorf("after Osaka's memory was forgotten Kate is mentioned with %q, want %q", got, want)
	}
	if cs, err := g.MentionedWith(ctx, all, kate, nil, 1); err != nil || coMentionList(cs) != "Falcon 2" {
		t.Errorf("limit 1: %q %v", coMentionList(cs), err)
	}

	// #mods is hidden: Valheim, known only from it, goes, and Bill counts only #general.
	general1 := &memory.Audience{Channels: map[string]bool{general: true}}
	if got, want := mentionedWith(all, kate, general1), "Falcon 2, Minecraft 1, William 1"; got != want {
		t.Errorf("Kate seen from #general is mentioned with %q, want %q", got, want)
	}
	// No channel allowed: only memories without an origin channel are read.
	if got, want := mentionedWith(all, kate, &memory.Audience{}), "Minecraft 1"; got != want {
		t.Errorf("Kate seen from nowhere is mentioned with %q, want %q", got, want)
	}

	// Another scope's entity read as g1's, or g1's read from g2 or a member's personal
	// scope, shares nothing.
	nb2, err := g.Neighbourhood(ctx, memory.ServerOwner("g2"), "Kate")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vis memory.Visible
		id  int64
	}{{all, nb2.Entity.ID}, {memory.Visible{Owner: memory.ServerOwner("g2")}, kate}, {memory.Visible{Owner: memory.PersonalOwner("u1")}, kate}} {
		if got := mentionedWith(c.vis, c.id, nil); got != "" {
			t.Errorf("entity %d read in %s is mentioned with %q", c.id, c.vis.Owner, got)
		}
	}

	// A memory's entities at once: each memory counted once, however many of them it names.
	memoryMentionedWith := func(id int64, aud *memory.Audience) string {
		t.Helper()
		cs, err := g.MemoryMentionedWith(ctx, all, id, aud, 10)
		if err != nil {
			t.Fatalf("mentioned with memory #%d: %v", id, err)
		}
		return coMentionList(cs)
	}
	if got, want := memoryMentionedWith(launch.ID, nil), "Minecraft 1, Valheim 1"; got != want {
		t.Errorf("memory #%d's entities are mentioned with %q, want %q", launch.ID, got, want)
	}
	if got, want := memoryMentionedWith(launch.ID, general1), "Minecraft 1"; got != want {
		t.Errorf("seen from #general, memory #%d's entities are mentioned with %q, want %q", launch.ID, got, want)
	}
	for _, c := range []struct {
		name string
		vis  memory.Visible
		id   int64
		aud  *memory.Audience
	}{
		{"HiddenChannel", all, raid.ID, general1},
		{"Forgotten", all, move.ID, nil},
		{"OtherScope", memory.Visible{Owner: memory.ServerOwner("g2")}, launch.ID, nil},
	} {
		_, err := g.MemoryMentionedWith(ctx, c.vis, c.id, c.aud, 10)
		if memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Errorf("%s: memory #%d gave %v, want ENOTFOUND", c.name, c.id, err)
		}
	}

	// A personal scope narrowed to its memories made in g1 leaves g2's out.
	u2 := memory.PersonalOwner("u2")
	mustRemember(t, s, personal("u2", "g1", "Kate plays Valheim on Fridays"))
	far := mustRemember(t, s, personal("u2", "g2", "Kate visits Tokyo in May"))
	nbu, err := g.Neighbourhood(ctx, u2, "Kate")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mentionedWith(memory.Visible{Owner: u2}, nbu.Entity.ID, nil), "Tokyo 1, Valheim 1"; got != want {
		t.Errorf("u2's Kate is mentioned with %q, want %q", got, want)
	}
	fromG1 := memory.Visible{Owner: u2, OriginGuildID: "g1"}
	if got, want := mentionedWith(fromG1, nbu.Entity.ID, nil), "Valheim 1"; got != want {
		t.Errorf("u2's Kate, memories made in g1 only, is mentioned with %q, want %q", got, want)
	}
	if _, err := g.MemoryMentionedWith(ctx, fromG1, far.ID, nil, 10); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Errorf("u2's g2 memory read as made in g1: %v, want ENOTFOUND", err)
	}
}
