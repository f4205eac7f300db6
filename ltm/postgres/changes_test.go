package postgres_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/kioku-bot/kioku/ltm/postgres"
	"github.com/kioku-bot/kioku/memory"
)

// TestPostgresChangeNotices: one statement that changes many memories sends one notice per
// scope and 300 ids, which together name every memory; a recall that counts access sends
// none; settings changes are announced by id.
func TestPostgresChangeNotices(t *testing.T) {
	stores := openShared(t, 2)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	var (
		mu   sync.Mutex
		seen []postgres.Change
	)
	b.OnChange(func(c postgres.Change) {
		mu.Lock()
		seen = append(seen, c)
		mu.Unlock()
	})
	take := func() []postgres.Change {
		syncChanges(t, b)
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	const n = 650
	if _, err := a.Pool().Exec(ctx, `INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized,
		content_hash, source, created_at, updated_at, search_text)
		SELECT 'server', 'g:g1', 'g1', 'fact', 'note ' || i, 'note ' || i, md5(i::text), 'tool', 1, 1, 'note ' || i
		FROM generate_series(1, $1::int) i`, n); err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	notices := 0
	for _, c := range take() {
		if c.Kind != postgres.MemoriesChanged || c.ScopeKey != "g:g1" || len(c.IDs) > 300 {
			t.Fatalf("unexpected notice %v (%d ids)", c.Kind, len(c.IDs))
		}
		notices++
		for _, id := range c.IDs {
			ids[id] = true
		}
	}
	if len(ids) != n || notices != 3 {
		t.Fatalf("%d notices named %d memories, want 3 naming %d", notices, len(ids), n)
	}

	res, err := a.Recall.Search(ctx, memory.SearchQuery{Text: "note", Owners: []memory.Owner{memory.ServerOwner("g1")}, CountAccess: true})
	if err != nil || len(res) == 0 {
		t.Fatalf("search: %v %v", res, err)
	}
	if got := take(); len(got) != 0 {
		t.Errorf("counting access sent %d notices", len(got))
	}

	if err := a.Settings.SetPrivacy(ctx, "u1", memory.PrivacyPartial); err != nil {
		t.Fatal(err)
	}
	got := take()
	if !slices.ContainsFunc(got, func(c postgres.Change) bool { return c.Kind == postgres.UserSettingsChanged && c.UserID == "u1" }) {
		t.Errorf("a privacy change was announced as %+v", got)
	}
}
