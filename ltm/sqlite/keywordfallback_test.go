package sqlite

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// TestWordLegSmallShareSameScores: for a scope that holds a small share of the database,
// the scoped FTS5 query alone returns the same candidates and scores as ranking the global
// top list first, for words common in the other scopes and for words only it holds.
func TestWordLegSmallShareSameScores(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "kioku.db"))
	ctx := t.Context()
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var batch []memory.Memory
	for g := range 8 {
		for i := range 40 {
			batch = append(batch, memory.Memory{Scope: memory.ScopeServer, GuildID: fmt.Sprintf("g%d", g), CreatedAt: at,
				Content: fmt.Sprintf("note %d of guild %d about the garden and the harvest %d", i, g, i%7)})
		}
	}
	for i := range 12 {
		batch = append(batch, memory.Memory{Scope: memory.ScopeServer, GuildID: "small", CreatedAt: at,
			Content: fmt.Sprintf("the garden gate %d needs oil before the harvest fair", i)})
	}
	if _, err := s.Transfer.RememberMany(ctx, batch, "test"); err != nil {
		t.Fatal(err)
	}
	fts := engineOf(t, s).keywordSearch
	small := memory.ServerOwner("small").Key()
	if !fts.smallShare(ctx, []string{small}) {
		t.Fatal("12 of 332 memories are not a small share")
	}
	// The scope clause recall passes for one server's scope.
	where, args := "(m.scope_key = ?)", []any{small}
	for _, text := range []string{"garden harvest", "gate oil", "harvest fair garden gate"} {
		plan := recall.Analyze(text)
		expr := ftsExpr(&plan, true)
		for _, limit := range []int{5, 50} {
			viaGlobal, direct := map[int64]float64{}, map[int64]float64{}
			if err := fts.wordLeg(ctx, expr, false, where, args, limit, viaGlobal); err != nil {
				t.Fatal(err)
			}
			if err := fts.wordLeg(ctx, expr, true, where, args, limit, direct); err != nil {
				t.Fatal(err)
			}
			if len(direct) == 0 || !maps.Equal(viaGlobal, direct) {
				t.Fatalf("%q limit %d: scoped query %v, global top first %v", text, limit, direct, viaGlobal)
			}
		}
	}
}
