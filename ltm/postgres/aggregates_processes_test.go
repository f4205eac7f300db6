package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresBudgetAcrossProcesses: calls counted at once through two stores (two
// processes' pools) add up exactly, and under a limit exactly the limit's worth is taken,
// however the counts interleave.
func TestPostgresBudgetAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	const goroutinesPerStore, callsEach, limit = 6, 20, 50
	run := func(key string, limit int) (taken int64) {
		var wg sync.WaitGroup
		for _, s := range stores {
			for range goroutinesPerStore {
				wg.Go(func() {
					for range callsEach {
						_, ok, err := s.Budgets.AddModelCalls(context.Background(), key, "2026-03-01", 1, limit)
						if err != nil {
							t.Error(err)
							return
						}
						if ok {
							atomic.AddInt64(&taken, 1)
						}
					}
				})
			}
		}
		wg.Wait()
		return taken
	}
	const all = 2 * goroutinesPerStore * callsEach
	if taken := run("g:unlimited", 0); taken != all {
		t.Fatalf("%d calls counted without a limit, want %d", taken, all)
	}
	if n, err := stores[1].Budgets.ModelCalls(t.Context(), "g:unlimited", "2026-03-01"); err != nil || n != all {
		t.Fatalf("stored count %d %v, want %d", n, err, all)
	}
	if taken := run("g:limited", limit); taken != limit {
		t.Fatalf("%d calls taken under a limit of %d", taken, limit)
	}
	if n, err := stores[0].Budgets.ModelCalls(t.Context(), "g:limited", "2026-03-01"); err != nil || n != limit {
		t.Fatalf("stored count %d %v, want %d", n, err, limit)
	}
}

// TestPostgresWelcomeAcrossProcesses: GUILD_CREATE handled at once by two processes
// welcomes the server once; a departure recorded by both keeps one date.
func TestPostgresWelcomeAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	var (
		claimed atomic.Int32
		wg      sync.WaitGroup
		mu      sync.Mutex
		purges  = map[time.Time]bool{}
	)
	for i := range 10 {
		s := stores[i%2]
		wg.Go(func() {
			ok, err := s.Guilds.ClaimWelcome(context.Background(), "g1")
			if err != nil {
				t.Error(err)
			}
			if ok {
				claimed.Add(1)
			}
			d, err := s.Guilds.RecordDeparture(context.Background(), "g2", time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			purges[d.PurgeAfter] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := claimed.Load(); n != 1 {
		t.Fatalf("the welcome was claimed %d times, want once", n)
	}
	if len(purges) != 1 {
		t.Fatalf("one departure got %d purge dates: %v", len(purges), purges)
	}
}

// TestPostgresPipelineAcrossProcesses: batches for the same turns applied at once through
// two stores are applied once (the others find the cursor moved, and nothing of theirs is
// written); batches of different channels writing the same scopes in opposite orders all
// apply, none failing on a deadlock.
func TestPostgresPipelineAcrossProcesses(t *testing.T) {
	stores := openShared(t, 2)
	ctx := context.Background()
	srv, alice := memory.ServerOwner("g1"), memory.PersonalOwner("u1")
	add := func(owner memory.Owner, content string) memory.Proposal {
		return memory.Proposal{Action: memory.ProposeAdd, Owner: owner, Memory: memory.Memory{Content: content, GuildID: "g1"}, Reason: "new"}
	}
	t.Run("SameTurnsOnce", func(t *testing.T) {
		var (
			applied, moved atomic.Int32
			wg             sync.WaitGroup
		)
		for i := range 8 {
			s := stores[i%2]
			wg.Go(func() {
				_, err := s.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorFrom: 0, CursorTo: 5,
					Proposals: []memory.Proposal{add(srv, fmt.Sprintf("Worker %d learned the raid time", i))}})
				switch {
				case err == nil:
					applied.Add(1)
				case errors.Is(err, memory.ErrCursorMoved):
					moved.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if applied.Load() != 1 || moved.Load() != 7 {
			t.Fatalf("%d batches applied and %d refused, want 1 and 7", applied.Load(), moved.Load())
		}
		if _, n, err := stores[0].Memories.List(ctx, srv, memory.ListOptions{}); err != nil || n != 1 {
			t.Fatalf("%d memories after one batch applied: %v", n, err)
		}
		if cur, err := stores[1].Transcripts.ExtractionCursor(ctx, "g1", "c1"); err != nil || cur != 5 {
			t.Fatalf("cursor %d %v, want 5", cur, err)
		}
	})
	t.Run("CrossedScopesNeverDeadlock", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			s := stores[i%2]
			wg.Go(func() {
				channel := fmt.Sprintf("d%d", i)
				for round := range 5 {
					ps := []memory.Proposal{add(srv, fmt.Sprintf("Server fact %d from %s", round, channel)),
						add(alice, fmt.Sprintf("Alice fact %d from %s", round, channel))}
					if i%2 == 1 {
						ps[0], ps[1] = ps[1], ps[0]
					}
					if _, err := s.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: "g1", ChannelID: channel,
						CursorFrom: int64(round), CursorTo: int64(round + 1), Proposals: ps}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for owner, want := range map[memory.Owner]int{srv: 1 + 8*5, alice: 8 * 5} {
			if _, n, err := stores[0].Memories.List(ctx, owner, memory.ListOptions{}); err != nil || n != want {
				t.Errorf("%s holds %d memories (%v), want %d", owner.Key(), n, err, want)
			}
		}
	})
}
