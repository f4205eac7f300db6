package ltm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// utcDay is the span of the UTC day of t.
func utcDay(t time.Time) (time.Time, time.Time) {
	from := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 0, 1)
}

// TestImportRecomputesRefersTo: the export file carries a memory's words and when it was
// said, not the span they name (derived, as the hash is); an import computes the span
// again from those two, so the memory refers to the same day in the new store.
func TestImportRecomputesRefersTo(t *testing.T) {
	src := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // a Monday
	m := server("g1", "We ship the demo on the 14th")
	m.CreatedAt = said
	written := testkit.MustRemember(t, src, m)
	wantFrom, wantTo := utcDay(time.Date(2023, 5, 14, 0, 0, 0, 0, time.UTC))
	if !written.RefersTo.Equal(wantFrom) || !written.RefersToEnd.Equal(wantTo) {
		t.Fatalf("written with span %v–%v, want %v–%v", written.RefersTo, written.RefersToEnd, wantFrom, wantTo)
	}
	exported, err := src.Transfer.Export(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(exported)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "refers_to") {
		t.Errorf("the export file carries the derived span: %s", data)
	}
	parsed, err := memory.ParseExport(data)
	if err != nil {
		t.Fatal(err)
	}
	dst := testkit.MustOpenStore(t)
	res, err := dst.Transfer.Import(ctx, owner, parsed, "test")
	if err != nil || len(res.IDs) != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	got, err := dst.Memories.Get(ctx, owner, res.IDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !got.RefersTo.Equal(wantFrom) || !got.RefersToEnd.Equal(wantTo) {
		t.Errorf("imported with span %v–%v, want %v–%v", got.RefersTo, got.RefersToEnd, wantFrom, wantTo)
	}
}

// TestRememberManyStoresRefersTo: a bulk write stores each memory's span, in statements of
// many rows (more than one statement here), against each memory's own creation time.
func TestRememberManyStoresRefersTo(t *testing.T) {
	s := testkit.MustOpenStore(t)
	owner := memory.ServerOwner("g1")
	start := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	const n = 1200
	mems := make([]memory.Memory, n)
	for i := range mems {
		mems[i] = server("g1", fmt.Sprintf("Note %d: we met up yesterday", i))
		if i%3 == 0 {
			mems[i].Content = fmt.Sprintf("Note %d: nothing dated here", i)
		}
		mems[i].CreatedAt = start.Add(time.Duration(i) * time.Hour)
	}
	res, err := s.Transfer.RememberMany(ctx, mems, "test")
	if err != nil || res.Created != n {
		t.Fatalf("remember many: %+v, %v", res, err)
	}
	for _, i := range []int{0, 1, 2, 999, 1000, 1001, n - 1} {
		got, err := s.Memories.Get(ctx, owner, res.IDs[i])
		if err != nil {
			t.Fatal(err)
		}
		var wantFrom, wantTo time.Time
		if i%3 != 0 {
			wantFrom, wantTo = utcDay(mems[i].CreatedAt.AddDate(0, 0, -1))
		}
		if !got.RefersTo.Equal(wantFrom) || !got.RefersToEnd.Equal(wantTo) {
			t.Errorf("%q said %v: span %v–%v, want %v–%v", got.Content, mems[i].CreatedAt, got.RefersTo, got.RefersToEnd, wantFrom, wantTo)
		}
	}
}
