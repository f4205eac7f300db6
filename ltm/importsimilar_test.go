package ltm_test

import (
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestImportFlagsNearDuplicates: an imported memory that says again in other words what a
// memory the importer may see already said is saved and waits in the review queue beside
// it; one the importer may not see (learned in a hidden channel) flags nothing, so the
// import's answer tells nothing of it; two paraphrases inside one file do not flag each
// other; settling the pair with forget removes the import's copy.
func TestImportFlagsNearDuplicates(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	g := memory.ServerOwner("g1")
	kenji := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Kenji is allergic to peanuts",
		Provenance: memory.Provenance{ChannelID: "lobby"}})
	testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Bob works as a nurse",
		Provenance: memory.Provenance{ChannelID: "staff"}})
	file := memory.ExportFile{Format: memory.ExportFormat, Memories: []memory.ExportMemory{
		{Type: memory.TypeFact, Content: "Kenji has a peanut allergy"},
		{Type: memory.TypeFact, Content: "Bob is a nurse"},
		{Type: memory.TypeFact, Content: "Sara loves bouldering"},
		{Type: memory.TypeFact, Content: "Sara really loves bouldering"},
	}}
	by := memory.Importer{Actor: "user:7", AuthorID: "7", GuildID: "g1", ChannelID: "lobby",
		Audience: &memory.Audience{Channels: map[string]bool{"lobby": true}}}
	res, err := s.Transfer.ImportAs(ctx, g, file, by)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 4 || res.Similar != 1 {
		t.Fatalf("import %+v, want 4 created and 1 flagged", res)
	}
	items, total, err := s.Review.Queue(ctx, g, nil, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || items[0].Kind != memory.ReviewSimilar || items[0].Memory.ID != kenji.ID || items[0].Other.Content != "Kenji has a peanut allergy" {
		t.Fatalf("queue %+v", items)
	}
	if _, err := s.Review.Resolve(ctx, g, items[0].Ref, memory.ReviewForget, "", "user:7", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memories.Get(ctx, g, items[0].Other.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("the import's copy survived forget: %v", err)
	}
}
