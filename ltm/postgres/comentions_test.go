package postgres_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresWordCompanyAcrossProcesses: two processes writing, editing and forgetting
// memories that share their words, each counting what it marked while the other counts too,
// end with the counts the live memories give: no pair counted twice or lost, and no
// deadlock between the two countings of one pair.
func TestPostgresWordCompanyAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	ctx := t.Context()
	owner := memory.ServerOwner("g1")
	const perWriter = 40
	var wg sync.WaitGroup
	for si, s := range stores {
		wg.Go(func() {
			for i := range perWriter {
				res, err := s.Memories.Remember(ctx, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
					Content: fmt.Sprintf("Catan night on Friday with snacks %d from writer %d", i, si)}, "test")
				if err != nil {
					t.Error(err)
					return
				}
				switch i % 4 {
				case 1:
					text := fmt.Sprintf("Gloomhaven night on Friday with snacks %d from writer %d", i, si)
					if _, err := s.Memories.Modify(ctx, owner, res.Memory.ID, memory.Change{Content: &text}, "test"); err != nil {
						t.Error(err)
					}
				case 2:
					if _, err := s.Memories.Forget(ctx, owner, []int64{res.Memory.ID}, "test", ""); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	for _, s := range stores {
		if err := s.Maintenance.FlushWordCompany(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := stores[0].Maintenance.CheckWordCompany(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * perWriter * 3 / 4; rep.Drift != 0 || rep.Memories != want {
		t.Errorf("after two processes wrote at once: %+v, want %d memories counted and no drift", rep, want)
	}
	words, err := stores[1].Recall.Associated(ctx, memory.SearchQuery{Text: "what about gloomhaven?", Owners: []memory.Owner{owner}})
	if err != nil {
		t.Fatal(err)
	}
	if len(words) == 0 {
		t.Errorf("gloomhaven reaches no word, though %d memories hold it with friday", perWriter/2)
	}
}
