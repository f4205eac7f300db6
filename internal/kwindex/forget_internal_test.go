package kwindex

import (
	"testing"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// TestRemovedTagsLeaveTheIndex checks that filter metadata only removed memories used, tags
// included (a tag can be a word a member asked to forget), leaves the index at once.
func TestRemovedTagsLeaveTheIndex(t *testing.T) {
	idx := NewScope(DefaultParams)
	idx.Put(Doc{ID: 1, Content: "kept", Meta: vecindex.Meta{Type: "fact", Tags: []string{"quokkazebra"}}},
		Doc{ID: 2, Content: "kept too", Meta: vecindex.Meta{Type: "fact"}})
	idx.Remove(1)
	for _, p := range idx.profiles.list {
		for _, tag := range p.tags {
			if tag == "quokkazebra" {
				t.Fatal("a removed memory's tag is still held")
			}
		}
	}
	if len(idx.profiles.ids) != 1 {
		t.Errorf("%d profiles held for one memory", len(idx.profiles.ids))
	}
	hits := idx.Search(Query{Terms: []string{"kept"}, Filter: &vecindex.Filter{Types: []string{"fact"}}})
	if len(hits) != 1 || hits[0].ID != 2 {
		t.Errorf("the surviving memory lost its metadata: %v", hits)
	}
}

// TestRemovedMemoryLeavesNoRecord checks that a removed memory's token record is cleared
// and its slot no longer names it: its dead postings, until the next compaction, tie no
// word to the memory.
func TestRemovedMemoryLeavesNoRecord(t *testing.T) {
	idx := NewScope(DefaultParams)
	idx.Put(Doc{ID: 41, Content: "quokkazebra secret", Author: "alice"}, Doc{ID: 42, Content: "secret plans", Author: "bob"})
	slot, _ := idx.slots.find(idx.docs.ids, 41)
	idx.Remove(41)
	for _, b := range idx.docs.record(slot) {
		if b != 0 {
			t.Fatalf("the removed memory's record still holds %v", idx.docs.record(slot))
		}
	}
	if idx.docs.ids[slot] != 0 {
		t.Errorf("the dead slot still names memory %d", idx.docs.ids[slot])
	}
	if hits := idx.Search(Query{Terms: []string{"secret"}}); len(hits) != 1 || hits[0].ID != 42 {
		t.Errorf("search after the removal: %v", hits)
	}
}
