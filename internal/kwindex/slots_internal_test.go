package kwindex

import (
	"math/rand/v2"
	"testing"
)

// TestSlotIndexMatchesMap puts, replaces and removes ids at random against a map kept
// alongside, compacting the slots now and then as a scope does, and checks after each
// step that every id is found exactly when the map holds it, at its slot. Many rounds of a
// dozen ids keep the table at 16 or 32 slots, where probes often wrap around its end.
func TestSlotIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		slotIndexMatchesMap(t, r, 12, 200)
	}
	slotIndexMatchesMap(t, r, 3000, 20_000)
}

func slotIndexMatchesMap(t *testing.T, r *rand.Rand, span, steps int) {
	t.Helper()
	pool := make([]int64, span)
	for i := range pool {
		pool[i] = 1 + r.Int64N(1<<40)
	}
	var x slotIndex
	var ids []int64
	want := map[int64]int32{}
	for step := range steps {
		id := pool[r.IntN(span)]
		if slot, ok := want[id]; ok {
			x.remove(ids, id)
			ids[slot] = 0
			delete(want, id)
		}
		if r.IntN(3) > 0 {
			ids = append(ids, id)
			x.insert(ids, int32(len(ids)-1))
			want[id] = int32(len(ids) - 1)
		}
		if dead := len(ids) - len(want); dead >= 16 && dead*3 >= len(ids) {
			var live []int64
			for _, id := range ids {
				if id != 0 {
					want[id] = int32(len(live))
					live = append(live, id)
				}
			}
			ids = live
			x.rebuild(ids)
		}
		for _, id := range pool[:min(span, 200)] {
			slot, ok := x.find(ids, id)
			wslot, wok := want[id]
			if ok != wok || ok && slot != wslot {
				t.Fatalf("%d ids, step %d: id %d at %d, %v; want %d, %v", span, step, id, slot, ok, wslot, wok)
			}
		}
	}
}
