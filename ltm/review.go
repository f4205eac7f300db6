package ltm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/kioku-bot/kioku/memory"
)

// The review queue: disputed pairs, read from the memories' state, and the review_needed
// history rows nobody has settled yet (reviewed_at is NULL): pairs the contradiction screen
// flagged, near-duplicates an import saved, and changes the pipeline could not make alone.

// reviewScan bounds the open history rows one reading of the queue looks at, newest first.
const reviewScan = 500

// Queue returns what waits for review in owner's scope that aud allows, newest first,
// limit items from offset, and how many wait in all. An item is listed only when
// everything it shows may be shown to aud: both memories of a pair, and the words a
// proposal quotes; what aud may not see is neither listed nor counted.
func (s *Review) Queue(ctx context.Context, owner memory.Owner, aud *memory.Audience, limit, offset int) ([]memory.ReviewItem, int, error) {
	if err := owner.Validate(); err != nil {
		return nil, 0, err
	}
	items, err := s.items(ctx, s.db.read, owner, aud)
	if err != nil {
		return nil, 0, err
	}
	total := len(items)
	if offset >= total {
		return nil, total, nil
	}
	if limit <= 0 {
		limit = 10
	}
	return items[offset:min(total, offset+limit)], total, nil
}

// items reads the whole queue of owner's scope under aud.
func (s *Review) items(ctx context.Context, q querier, owner memory.Owner, aud *memory.Audience) ([]memory.ReviewItem, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE scope_key = ? AND state = 'disputed'
		AND deleted_at IS NULL ORDER BY id`, owner.Key())
	if err != nil {
		return nil, fmt.Errorf("couldn't read the disputed memories: %w", err)
	}
	disputed, err := collectMemories(rows)
	if err != nil {
		return nil, err
	}
	var items []memory.ReviewItem
	for _, m := range disputed {
		if item, ok, err := s.disputedItem(ctx, q, owner, m, aud); err != nil {
			return nil, err
		} else if ok {
			items = append(items, item)
		}
	}
	rows, err = q.QueryContext(ctx, `SELECT `+historyColumns+` FROM memory_history WHERE scope_key = ? AND action = ?
		AND reviewed_at IS NULL AND memory_id IS NOT NULL ORDER BY id DESC LIMIT ?`, owner.Key(), memory.ActionReview, reviewScan)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the review queue: %w", err)
	}
	events, err := collectHistory(rows)
	if err != nil {
		return nil, err
	}
	pairs := map[[2]int64]bool{}
	for _, ev := range events {
		item, ok, err := s.rowItem(ctx, q, owner, ev, aud)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if item.Other != nil {
			key := [2]int64{item.Memory.ID, item.Other.ID}
			if pairs[key] {
				continue // the screen flags a pair on both memories: one item
			}
			pairs[key] = true
		}
		items = append(items, item)
	}
	slices.SortStableFunc(items, func(a, b memory.ReviewItem) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return items, nil
}

// disputedItem is the item of disputed memory m: the pair it forms with the memory it
// names, listed once (under the older), and only when aud may see both.
func (s *Review) disputedItem(ctx context.Context, q querier, owner memory.Owner, m *memory.Memory, aud *memory.Audience) (memory.ReviewItem, bool, error) {
	other, err := findMemory(ctx, q, owner, m.StateRef, false)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		other = nil // its partner was forgotten: the dispute waits alone
	} else if err != nil {
		return memory.ReviewItem{}, false, err
	}
	if other != nil && other.State == memory.StateDisputed && other.StateRef == m.ID && other.ID < m.ID {
		return memory.ReviewItem{}, false, nil
	}
	if !aud.Allows(m) || (other != nil && !aud.Allows(other)) {
		return memory.ReviewItem{}, false, nil
	}
	item := memory.ReviewItem{Ref: "d" + strconv.FormatInt(m.ID, 10), Kind: memory.ReviewDisputed, Memory: m, Other: other,
		CreatedAt: cmp.Or(m.UpdatedAt, m.CreatedAt)}
	if other != nil && other.UpdatedAt.After(item.CreatedAt) {
		item.CreatedAt = other.UpdatedAt
	}
	return item, true, nil
}

// reviewMeta is what a review_needed row's metadata says of the pair it flags.
type reviewMeta struct {
	ConflictsWith int64 `json:"conflicts_with"`
	SimilarTo     int64 `json:"similar_to"`
}

// rowItem is the item of open review_needed row ev: skipped when its memory is gone, when
// the memory it pairs with is gone, or when aud may not see all it shows.
func (s *Review) rowItem(ctx context.Context, q querier, owner memory.Owner, ev memory.HistoryEvent, aud *memory.Audience) (memory.ReviewItem, bool, error) {
	if _, withheld := ev.ShownTo(aud); withheld {
		return memory.ReviewItem{}, false, nil
	}
	var meta reviewMeta
	if len(ev.Metadata) > 0 {
		_ = json.Unmarshal(ev.Metadata, &meta) // a row without pair metadata is a proposal
	}
	m, err := findMemory(ctx, q, owner, ev.MemoryID, false)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return memory.ReviewItem{}, false, nil
	}
	if err != nil || !aud.Allows(m) {
		return memory.ReviewItem{}, false, err
	}
	item := memory.ReviewItem{Ref: "h" + strconv.FormatInt(ev.ID, 10), Kind: memory.ReviewProposal, Memory: m,
		Reason: ev.Reason, CreatedAt: ev.CreatedAt}
	pairWith, kind := meta.ConflictsWith, memory.ReviewConflict
	if meta.SimilarTo != 0 {
		pairWith, kind = meta.SimilarTo, memory.ReviewSimilar
	}
	if pairWith == 0 {
		item.Proposed = ev.NewContent
		return item, true, nil
	}
	other, err := findMemory(ctx, q, owner, pairWith, false)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return memory.ReviewItem{}, false, nil
	}
	if err != nil || !aud.Allows(other) {
		return memory.ReviewItem{}, false, err
	}
	item.Kind = kind
	if other.ID < m.ID {
		m, other = other, m
	}
	item.Memory, item.Other = m, other
	return item, true, nil
}

// Waiting counts what waits for review in every scope: disputed memories and open
// review_needed rows, as an upper bound (a row whose memory was forgotten since still
// counts until retention takes it), for kioku doctor.
func (s *Review) Waiting(ctx context.Context) (int, error) {
	var n int
	err := s.db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM memories WHERE state = 'disputed' AND deleted_at IS NULL)
		+ (SELECT count(*) FROM memory_history WHERE action = ? AND reviewed_at IS NULL AND memory_id IS NOT NULL)`,
		memory.ActionReview).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("couldn't count what waits for review: %w", err)
	}
	return n, nil
}

// flagSimilar puts in the review queue each memory of created (an import's, just committed)
// that says again in other words what an older memory the importer may see already said:
// a review_needed row on the older memory, pairing it with the new one (similar_to). An
// import is not refused for a near-duplicate, and none is saved silently. It returns how
// many it flagged.
func (s *Transfer) flagSimilar(ctx context.Context, w *memory.WriteContext, owner memory.Owner, created []int64, actor memory.Actor) (int, error) {
	own := make(map[int64]bool, len(created))
	for _, id := range created {
		own[id] = true
	}
	flagged := 0
	for _, id := range created {
		m, err := findMemory(ctx, s.db.read, owner, id, false)
		if memory.ErrorCode(err) == memory.ENOTFOUND {
			continue // forgotten meanwhile
		}
		if err != nil {
			return flagged, err
		}
		near, err := s.dups.similarExcept(ctx, w, owner, m.Content, own, true)
		if err != nil || near == nil {
			if err != nil {
				return flagged, err
			}
			continue
		}
		ev := memory.HistoryEvent{MemoryID: near.ID, ScopeKey: owner.Key(), Action: memory.ActionReview,
			OldContent: near.Content, NewContent: m.Content, OldOrigin: memory.OriginOf(near), NewOrigin: memory.OriginOf(m),
			Version: near.Version, Actor: actor, Reason: fmt.Sprintf("imported #%d says this again in other words", m.ID),
			Metadata: mustJSON(map[string]any{"similar_to": m.ID})}
		if err := s.db.withWriteTx(ctx, func(tx *txn) error { return s.db.writes.addHistory(ctx, tx, ev) }); err != nil {
			return flagged, err
		}
		flagged++
	}
	return flagged, nil
}
