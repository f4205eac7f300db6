package ltm_test

import (
	"math"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

const day = 24 * time.Hour

var decayEpoch = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// decayStore is recallStore with the hand-driven clock at decayEpoch.
func decayStore(t *testing.T, hybrid bool) (*ltm.Store, *testkit.Clock) {
	t.Helper()
	s, _ := recallStore(t, hybrid)
	clock := testkit.NewClock(decayEpoch)
	s.Now = clock.Now
	return s, clock
}

func mustGet(t *testing.T, s *ltm.Store, m *memory.Memory) *memory.Memory {
	t.Helper()
	got, err := s.Memories.Get(ctx, m.Owner(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRecallImportanceMinDecays: the importance_min filter applies the importance decayed
// to the store's clock, to the day, the same value memory.EffectiveImportance gives, while
// pinned memories and decisions keep their base; the stored column is never rewritten.
func TestRecallImportanceMinDecays(t *testing.T) {
	forEachMode(t, func(t *testing.T, hybrid bool) {
		s, clock := decayStore(t, hybrid)
		owner := memory.ServerOwner("gDecay")
		mk := func(content string, typ memory.Type, pinned bool) *memory.Memory {
			m := server("gDecay", content)
			m.Type, m.Pinned, m.Importance = typ, pinned, 0.8
			return testkit.MustRemember(t, s, m)
		}
		plain := mk("the lantern hangs in the shed", memory.TypeFact, false)
		pinned := mk("the lantern is lit at dusk", memory.TypeFact, true)
		decision := mk("we decided the lantern stays outside", memory.TypeDecision, false)
		search := func(min float64) []memory.SearchResult {
			t.Helper()
			var out []memory.SearchResult
			for _, r := range mustSearch(t, s, memory.SearchQuery{Text: "lantern", Owners: []memory.Owner{owner}, ImportanceMin: min}) {
				if matched(r) {
					out = append(out, r)
				}
			}
			return out
		}

		for _, at := range []time.Duration{0, day - time.Millisecond, day, 2 * day, 10 * day, 14*day - time.Millisecond, 14 * day, 30 * day} {
			clock.Advance(decayEpoch.Add(at).Sub(clock.Now()))
			days := int64(at / day)
			for _, m := range []*memory.Memory{plain, pinned, decision} {
				got := mustGet(t, s, m)
				if got.Importance != 0.8 {
					t.Fatalf("day %d: #%d stored importance %v, want the base 0.8 untouched", days, m.ID, got.Importance)
				}
				eff := got.EffectiveImportance(clock.Now())
				want := 0.8
				if m == plain {
					want = 0.8 * math.Pow(0.95, float64(days))
				}
				if math.Abs(eff-want) > 1e-12 {
					t.Fatalf("day %d: #%d effective importance %v, want %v", days, m.ID, eff, want)
				}
				if _, ok := find(search(eff-1e-9), m.ID); !ok {
					t.Fatalf("day %d: #%d (effective %v) filtered out by importance_min %v", days, m.ID, eff, eff-1e-9)
				}
				if _, ok := find(search(eff+1e-9), m.ID); ok {
					t.Fatalf("day %d: #%d (effective %v) kept by importance_min %v", days, m.ID, eff, eff+1e-9)
				}
			}
		}
		// 30 days on, the plain fact is at 0.8×0.95^30 ≈ 0.17; the pin and the decision are not.
		wantOnly(t, search(0.5), pinned.ID, decision.ID)
	})
}

// TestRecallRanksByDecayedImportance: of two equally relevant memories created together,
// the more important one ranks first until, a month without recall later, its decayed
// importance is below that of the decision, which does not decay.
func TestRecallRanksByDecayedImportance(t *testing.T) {
	s, clock := decayStore(t, false)
	owner := memory.ServerOwner("gRank")
	fact := server("gRank", "the red kite flies over the hill")
	fact.Importance = 0.9
	factM := testkit.MustRemember(t, s, fact)
	dec := server("gRank", "the red kite sails over the hill")
	dec.Type, dec.Importance = memory.TypeDecision, 0.6
	decM := testkit.MustRemember(t, s, dec)
	order := func() []int64 {
		t.Helper()
		res := mustSearch(t, s, memory.SearchQuery{Text: "kite", Owners: []memory.Owner{owner}})
		if len(res) != 2 || res[0].Keyword != res[1].Keyword {
			t.Fatalf("want two equally relevant results:%s", describe(res))
		}
		return idsOf(res)
	}
	if got := order(); got[0] != factM.ID {
		t.Fatalf("day 0: order %v, want the fact (0.9) #%d before the decision (0.6) #%d", got, factM.ID, decM.ID)
	}
	clock.Advance(30 * day)
	if got := order(); got[0] != decM.ID {
		t.Fatalf("day 30: order %v, want the decision #%d (0.6) before the fact #%d (0.9×0.95^30 ≈ 0.19)", got, decM.ID, factM.ID)
	}
}

// TestRecallCountsOnlyUserFacingAccess: searches that no person asked for (an eval-style
// search, a forget preview) leave access_count and the last access alone, so the memory
// keeps decaying; a search with CountAccess records the access and restores the base
// importance, from which decay starts again.
func TestRecallCountsOnlyUserFacingAccess(t *testing.T) {
	s, clock := decayStore(t, false)
	owner := memory.ServerOwner("gAccess")
	in := server("gAccess", "the harbour ferry leaves at noon")
	in.Importance = 0.8
	m := testkit.MustRemember(t, s, in)
	clock.Advance(20 * day)
	decayed := 0.8 * math.Pow(0.95, 20)
	q := memory.SearchQuery{Text: "ferry", Owners: []memory.Owner{owner}}
	untouched := func(what string) {
		t.Helper()
		if err := s.Recall.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, m)
		if got.AccessCount != 0 || !got.AccessedAt.IsZero() {
			t.Fatalf("after %s: access count %d, last access %v, want untouched", what, got.AccessCount, got.AccessedAt)
		}
		if eff := got.EffectiveImportance(clock.Now()); math.Abs(eff-decayed) > 1e-12 {
			t.Fatalf("after %s: effective importance %v, want still decayed to %v", what, eff, decayed)
		}
	}

	t.Run("EvalStyleSearchDoesNotCount", func(t *testing.T) {
		wantOnly(t, mustSearch(t, s, q), m.ID)
		untouched("a search without CountAccess")
	})
	t.Run("ForgetPreviewDoesNotCount", func(t *testing.T) {
		p, err := s.Confirmations.PreviewForget(ctx, owner, "ferry", "test", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Matches) != 1 || p.Matches[0].ID != m.ID {
			t.Fatalf("preview matches %v, want #%d", p.Matches, m.ID)
		}
		untouched("a forget preview")
	})
	t.Run("ImportanceMinSeesTheDecay", func(t *testing.T) {
		if res := mustSearch(t, s, memory.SearchQuery{Text: "ferry", Owners: []memory.Owner{owner}, ImportanceMin: 0.7}); len(res) != 0 {
			t.Fatalf("importance_min 0.7 kept a memory decayed to %.3f:%s", decayed, describe(res))
		}
	})
	t.Run("UserFacingSearchResetsTheClock", func(t *testing.T) {
		uq := q
		uq.CountAccess = true
		wantOnly(t, mustSearch(t, s, uq), m.ID)
		if err := s.Recall.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, m)
		if got.AccessCount != 1 || !got.AccessedAt.Equal(clock.Now()) {
			t.Fatalf("access count %d, last access %v, want 1 at %v", got.AccessCount, got.AccessedAt, clock.Now())
		}
		if eff := got.EffectiveImportance(clock.Now()); eff != 0.8 {
			t.Fatalf("effective importance %v right after a recall, want the base 0.8", eff)
		}
		wantOnly(t, mustSearch(t, s, memory.SearchQuery{Text: "ferry", Owners: []memory.Owner{owner}, ImportanceMin: 0.7}), m.ID)
		clock.Advance(day)
		if eff := mustGet(t, s, m).EffectiveImportance(clock.Now()); math.Abs(eff-0.8*0.95) > 1e-12 {
			t.Fatalf("a day after the recall: effective importance %v, want %v", eff, 0.8*0.95)
		}
	})
}
