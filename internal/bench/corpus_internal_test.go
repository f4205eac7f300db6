package bench

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// The scope plan gives every memory one scope, keeps the hot guild the biggest, and fills
// each bucket.
func TestScopePlan(t *testing.T) {
	for _, tc := range []struct{ n, guilds int }{{2000, 1}, {1200, 10}, {6000, 20}, {20000, 50}, {1_100_000, 1000}} {
		plan := scopePlan(tc.n, tc.guilds)
		total, biggestOther := 0, 0
		buckets := map[string]int{}
		for s, sc := range plan {
			size := cap(sc.members)
			if size < 1 {
				t.Fatalf("n %d guilds %d: scope %d (%s) is empty", tc.n, tc.guilds, s, sc.bucket)
			}
			total += size
			buckets[sc.bucket]++
			if s > 0 {
				biggestOther = max(biggestOther, size)
			}
			if sc.personal != (sc.bucket == "personal") {
				t.Errorf("scope %d: personal %v in bucket %s", s, sc.personal, sc.bucket)
			}
		}
		if total != tc.n {
			t.Errorf("n %d guilds %d: the plan holds %d memories", tc.n, tc.guilds, total)
		}
		if tc.guilds == 1 {
			if len(plan) != 1 {
				t.Errorf("one guild: %d scopes", len(plan))
			}
			continue
		}
		if hot := cap(plan[0].members); hot < 2*biggestOther || hot < tc.n/11 {
			t.Errorf("n %d guilds %d: hot guild %d, biggest other %d", tc.n, tc.guilds, hot, biggestOther)
		}
		if buckets["hot"] != 1 || buckets["medium"] < 1 || buckets["small"] < 1 || buckets["personal"] < 2 ||
			buckets["hot"]+buckets["medium"]+buckets["small"] != tc.guilds {
			t.Errorf("n %d guilds %d: buckets %v", tc.n, tc.guilds, buckets)
		}
	}
}

// The corpus talks like a group chat: the cast by names and nicknames, mentions, places,
// dates, decisions and Japanese; and the query mix has every kind, with the date questions
// naming a window that recall resolves.
func TestCorpusHasNamesDatesLinksAndEveryQueryKind(t *testing.T) {
	c := newCorpus(3, 3000, 16, 300, 10)
	all := strings.Join(c.texts, "\n")
	for _, want := range []string{"Kate", "Katherine", "Sasha", "<@4000000000", " on 3 March", "last weekend",
		"we decided to use", "switched from", "Kyoto", "さんと", "決めた"} {
		if !strings.Contains(all, want) {
			t.Errorf("no memory contains %q", want)
		}
	}
	kinds := map[string]int{}
	windows := 0
	for _, q := range c.queries {
		kinds[q.kind]++
		if q.scope != 0 {
			t.Errorf("query %q is asked in scope %d, want the hot guild", q.text, q.scope)
		}
		if (q.source >= 0) != slices.Contains([]string{"perturbed", "long", "short"}, q.kind) {
			t.Errorf("%s query %q has source %d", q.kind, q.text, q.source)
		}
		if q.source >= 0 && c.scopeOf[q.source] != 0 {
			t.Errorf("query %q comes from a memory of scope %d", q.text, c.scopeOf[q.source])
		}
		if q.kind == "date" && !recall.AnalyzeAt(q.text, q.askedAt).Window.IsZero() {
			windows++
		}
	}
	for _, k := range queryKinds {
		if kinds[k.kind] == 0 {
			t.Errorf("no %s query in %v", k.kind, kinds)
		}
	}
	if windows == 0 {
		t.Error("no date query names a date window recall resolves")
	}
	for _, b := range []string{"medium", "small", "personal"} {
		if len(c.bucketQueries[b]) == 0 {
			t.Errorf("no queries for the %s bucket", b)
		}
		for _, q := range c.bucketQueries[b] {
			if c.scopes[q.scope].bucket != b {
				t.Errorf("%s query %q is asked in a %s scope", b, q.text, c.scopes[q.scope].bucket)
			}
		}
	}
	if len(c.coldQueries) == 0 {
		t.Error("no cold-guild queries")
	}
	seen := map[int]bool{}
	for _, q := range c.coldQueries {
		if c.scopes[q.scope].bucket != "small" || seen[q.scope] {
			t.Errorf("cold query in scope %d (%s), seen before %v", q.scope, c.scopes[q.scope].bucket, seen[q.scope])
		}
		seen[q.scope] = true
	}
	if len(c.scopeQueries) != len(c.scopes) {
		t.Errorf("%d queries touch the %d scopes", len(c.scopeQueries), len(c.scopes))
	}

	again := newCorpus(3, 3000, 16, 300, 10)
	if !slices.Equal(c.texts, again.texts) || !slices.Equal(c.scopeOf, again.scopeOf) {
		t.Error("the same seed made a different corpus")
	}
}

// Loaded through the real write path, the corpus gives the entity linker and the decision
// detector work: nicknames resolve to one person with their memories, mentions to members,
// and decision language marks memories as decisions.
func TestCorpusExercisesGraphAndDecisions(t *testing.T) {
	ctx := context.Background()
	r := &run{opt: Options{}, c: newCorpus(5, 800, 16, 20, 1), progress: func(string, ...any) {}}
	store, err := r.open(ctx, filepath.Join(t.TempDir(), "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var rep Report
	if _, err := r.load(ctx, store, nil, &rep); err != nil {
		t.Fatal(err)
	}
	owner := r.owner(0)
	nb, err := store.Graph.Neighbourhood(ctx, owner, "Kate")
	if err != nil {
		t.Fatalf("no entity for Kate: %v", err)
	}
	if nb.Entity.Name != "Katherine" || len(nb.Memories) == 0 {
		t.Errorf("Kate is %q with %d memories, want Katherine with some", nb.Entity.Name, len(nb.Memories))
	}
	top, err := store.Graph.TopEntities(ctx, owner, 500)
	if err != nil {
		t.Fatal(err)
	}
	members := 0
	for _, e := range top {
		if e.UserID != "" {
			members++
		}
	}
	if members == 0 {
		t.Errorf("no entity resolved to a member among %d", len(top))
	}
	decisions, total, err := store.Memories.List(ctx, owner, memory.ListOptions{Type: memory.TypeDecision, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 {
		t.Fatal("no memory was stored as a decision")
	}
	for _, m := range decisions {
		if !strings.Contains(m.Content, "decided") && !strings.Contains(m.Content, "switched") &&
			!strings.Contains(m.Content, "prefers") && !strings.Contains(m.Content, "決めた") {
			t.Errorf("decision without decision language: %q", m.Content)
		}
	}
}
