package kwindex

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestForgottenWordLeavesKeyArena checks that a removed memory's words, and its CJK
// bigrams, are gone from the bytes of the dictionaries' key arenas at once, not merely
// unreferenced, while words other memories hold stay.
func TestForgottenWordLeavesKeyArena(t *testing.T) {
	idx := NewScope(DefaultParams)
	idx.Put(Doc{ID: 1, Content: "quokkazebra likes tea", Author: "alice", Grams: "秘密基地"},
		Doc{ID: 2, Content: "alice likes coffee", Author: "bob", Grams: "喫茶店"})
	for _, word := range []string{"quokkazebra", "秘密"} {
		if !idx.Holds(word) {
			t.Fatalf("%q is not held before the removal", word)
		}
	}
	idx.Remove(1)
	for _, word := range []string{"quokkazebra", "tea", "秘密", "密基", "基地"} {
		if idx.Holds(word) {
			t.Errorf("%q is still held", word)
		}
		for name, d := range map[string]*dict{"terms": &idx.terms, "grams": &idx.grams} {
			if bytes.Contains(d.arena[:cap(d.arena)], []byte(word)) {
				t.Errorf("the %s arena still holds the bytes of %q", name, word)
			}
		}
	}
	for _, word := range []string{"alice", "coffee", "喫茶"} {
		if !idx.Holds(word) {
			t.Errorf("%q, still held by memory 2, was lost", word)
		}
	}
}

// TestKeyArenaLeavesNoCopyBehind checks that the arrays a key arena leaves when it grows
// or is repacked are zeroed: a key released later must not survive in an old copy.
func TestKeyArenaLeavesNoCopyBehind(t *testing.T) {
	var d dict
	d.id("quokkazebra")
	old := d.arena[:cap(d.arena)]
	for i := range 200 {
		d.id(fmt.Sprintf("filler%d", i))
	}
	if &old[0] == &d.arena[0] {
		t.Fatal("the arena did not grow")
	}
	if bytes.ContainsFunc(old, func(r rune) bool { return r != 0 }) {
		t.Errorf("the arena's old array still holds %q", bytes.Trim(old, "\x00"))
	}
	id, _ := d.find("quokkazebra")
	d.entries[id].live = 1
	before := d.arena[:cap(d.arena)]
	d.trim()
	if &before[0] == &d.arena[0] {
		t.Fatal("trim did not repack the arena")
	}
	if bytes.ContainsFunc(before, func(r rune) bool { return r != 0 }) {
		t.Error("the arena's array before the trim was not zeroed")
	}
	if got, ok := d.find("quokkazebra"); !ok || got != id {
		t.Errorf("after the trim quokkazebra is %d, %v; want %d", got, ok, id)
	}
}

// TestDictMatchesMap adds and releases keys at random, enough to grow the table, reuse
// numbers and repack the arena, and checks after each step that every key is found exactly
// when a map kept alongside holds it, under its number. Many rounds of a dozen keys keep
// the table at 16 or 32 slots, where probes often wrap around its end.
func TestDictMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for range 300 {
		dictMatchesMap(t, r, 12, 200)
	}
	dictMatchesMap(t, r, 400, 20_000)
}

func dictMatchesMap(t *testing.T, r *rand.Rand, nkeys, steps int) {
	t.Helper()
	var d dict
	want := map[string]uint32{}
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d%s", r.Uint64(), strings.Repeat("x", r.IntN(20)))
	}
	check := func(step int) {
		t.Helper()
		for _, k := range keys {
			id, ok := d.find(k)
			wid, wok := want[k]
			if ok != wok || ok && id != wid {
				t.Fatalf("step %d: %q is %d, %v; want %d, %v", step, k, id, ok, wid, wok)
			}
			if ok && string(d.key(id)) != k {
				t.Fatalf("step %d: entry %d holds key %q, want %q", step, id, d.key(id), k)
			}
		}
		if d.terms() != len(want) {
			t.Fatalf("step %d: %d terms, want %d", step, d.terms(), len(want))
		}
	}
	for step := range steps {
		k := keys[r.IntN(len(keys))]
		if id, ok := want[k]; ok && r.IntN(2) == 0 {
			d.release(id)
			delete(want, k)
		} else if !ok {
			id := d.id(k)
			d.entries[id].live = 1
			want[k] = id
		}
		check(step)
		if step%5000 == 4999 || step == steps/2 {
			d.trim()
			check(step)
		}
	}
}

// TestSaturatedCountBoundsNothing checks that a count past what a bound keeps makes the
// word's bound infinite rather than too low, and that pruned searches still equal full
// scoring around such a document.
func TestSaturatedCountBoundsNothing(t *testing.T) {
	idx := NewScope(DefaultParams)
	idx.Put(Doc{ID: 1, Content: strings.Repeat("spam ", countSaturated+10) + "eggs"},
		Doc{ID: 2, Content: "spam eggs ham"}, Doc{ID: 3, Content: "ham ham eggs"})
	id, ok := idx.terms.find("spam")
	if !ok {
		t.Fatal("spam is not indexed")
	}
	bm := idx.bm25()
	if b := idx.terms.entries[id].bound(&bm, 1); !math.IsInf(b, 1) {
		t.Errorf("the bound of a saturated count is %v, want +Inf", b)
	}
	hid, _ := idx.terms.find("ham")
	if b := idx.terms.entries[hid].bound(&bm, 1); math.IsInf(b, 0) || b <= 0 {
		t.Errorf("the bound of ham is %v", b)
	}
	for _, terms := range [][]string{{"spam", "eggs"}, {"ham", "spam"}, {"eggs", "ham", "spam"}} {
		all := idx.Search(Query{Terms: terms})
		for limit := 1; limit <= 3; limit++ {
			got := idx.Search(Query{Terms: terms, Limit: limit})
			if fmt.Sprint(got) != fmt.Sprint(all[:min(limit, len(all))]) {
				t.Errorf("%v limit %d: %v, want the first of %v", terms, limit, got, all)
			}
		}
	}
}
