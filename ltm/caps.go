package ltm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// Per-scope memory caps (README "Limits"): a server, or one member's personal memory, holds
// at most so many live memories. A write that would pass the cap is refused with an ELIMIT
// error naming it, from every path (tools, commands, Remember this, recover and undo,
// imports, the CLI; the pipeline records its proposal as blocked). Nothing is ever dropped
// to make room: people choose what to forget.
//
// The check runs inside the write transaction on the one writer connection, so writers
// racing for the last free places cannot overshoot. It reads the scope's live count from
// memory_counts, which triggers keep current (migration 0009), so a full 200,000-memory
// server costs one primary-key read per write rather than a count of its rows.

// Defaults of Store.MaxServerMemories and Store.MaxMemberMemories.
const (
	// DefaultMaxServerMemories bounds one server's live memories: twice the 100,000 that
	// recall is measured at (docs/recall.md), so a large community fits with room to spare,
	// and a runaway bot or script cannot grow one server's memory without end.
	DefaultMaxServerMemories = 200_000
	// DefaultMaxMemberMemories bounds one member's live personal memories: far more than
	// anyone saves by hand or the pipeline learns about one person in years, few enough
	// that one member cannot fill the database for everyone.
	DefaultMaxMemberMemories = 5_000
)

// memoryCap returns the most live memories a scope may hold, or 0 for no cap: the store's
// setting, its default when zero, no cap when negative.
func (s memoryWriter) memoryCap(scope memory.Scope) int {
	n, def := s.MaxServerMemories, DefaultMaxServerMemories
	if scope == memory.ScopePersonal {
		n, def = s.MaxMemberMemories, DefaultMaxMemberMemories
	}
	switch {
	case n < 0:
		return 0
	case n == 0:
		return def
	}
	return n
}

// LiveCount returns the number of live memories in owner's scope, as the caps count them.
func (s *Memories) LiveCount(ctx context.Context, owner memory.Owner) (int, error) {
	if err := owner.Validate(); err != nil {
		return 0, err
	}
	return liveCount(ctx, s.db.read, owner.Key())
}

const liveCountSQL = `SELECT live FROM memory_counts WHERE scope_key = ?`

// liveCount reads the live memories of scopeKey from the counts the triggers keep.
func liveCount(ctx context.Context, q querier, scopeKey string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, liveCountSQL, scopeKey).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't count memories of %s: %w", scopeKey, err)
	}
	return n, nil
}

// checkCapTx refuses adding more live memories to owner's scope when that would take it
// past its cap. It runs inside the write transaction that adds them, before anything is
// written, so a refused write leaves the transaction as it was.
func (s memoryWriter) checkCapTx(ctx context.Context, tx querier, owner memory.Owner, adding int) error {
	limit := s.memoryCap(owner.Scope)
	if limit == 0 || adding <= 0 {
		return nil
	}
	live, err := liveCount(ctx, tx, owner.Key())
	if err != nil {
		return err
	}
	if live+adding <= limit {
		return nil
	}
	return capError(owner.Scope, limit, live, adding)
}

// capError is the refusal of a write that would take a scope of live memories past limit.
func capError(scope memory.Scope, limit, live, adding int) error {
	if adding == 1 {
		if scope == memory.ScopePersonal {
			return memory.Errorf(memory.ELIMIT, "This personal memory is full: a member can keep at most %s memories. Forget some first.", memory.Thousands(limit))
		}
		return memory.Errorf(memory.ELIMIT, "This server has reached its limit of %s memories; forget some first.", memory.Thousands(limit))
	}
	where := "this server"
	if scope == memory.ScopePersonal {
		where = "this personal memory"
	}
	return memory.Errorf(memory.ELIMIT, "Adding %s new memories would bring %s to %s, over its limit of %s memories (it holds %s); forget some first or add fewer.",
		memory.Thousands(adding), where, memory.Thousands(live+adding), memory.Thousands(limit), memory.Thousands(live))
}

// checkBatchCapsTx is checkCapTx for the fresh memories of a bulk write, scope by scope.
func (s memoryWriter) checkBatchCapsTx(ctx context.Context, tx querier, batch []memory.Memory, fresh []int) error {
	// By scope key: a member's personal memories from different servers are one scope.
	adding := map[string]int{}
	var order []memory.Owner
	for _, i := range fresh {
		o := batch[i].Owner()
		if adding[o.Key()] == 0 {
			order = append(order, o)
		}
		adding[o.Key()]++
	}
	for _, o := range order {
		if err := s.checkCapTx(ctx, tx, o, adding[o.Key()]); err != nil {
			return err
		}
	}
	return nil
}
