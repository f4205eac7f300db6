package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// TestServerBulkForgetAndUndo: an editor previews a forget of the checked memories (each
// one's id, words and before -> after, the pinned one too), applies exactly those, each an
// audited forget by her in /memory history, and the batch's one undo brings them all back.
func TestServerBulkForgetAndUndo(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			sw := newServerWorld(t, eng)
			ids := []int64{sw.general.ID, sw.mods.ID, sw.pin.ID}
			resp := preview(sw.alice, sw.aliceCSRF, "forget", "", ids, nil)
			if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, "<h1>Preview: 3 memories change</h1>") {
				t.Fatalf("preview: %d\n%s", resp.StatusCode, resp.body)
			}
			for _, m := range []*memory.Memory{sw.general, sw.mods, sw.pin} {
				if !strings.Contains(resp.body, fmt.Sprintf(">#%d</a>", m.ID)) || !strings.Contains(resp.body, m.Content) {
					t.Errorf("the preview misses #%d", m.ID)
				}
			}
			if !strings.Contains(resp.body, "<td>kept, pinned</td><td>forgotten</td>") {
				t.Errorf("the preview does not say the pinned memory is forgotten too:\n%s", resp.body)
			}
			if m := sw.get(t, guildHome, sw.general.ID); m.Deleted() {
				t.Fatal("the preview forgot a memory")
			}
			result := postBatch(sw.alice, sw.aliceCSRF, "apply", batchOf(resp.body))
			if result.StatusCode != http.StatusOK || !strings.Contains(result.body, "3 memories were changed") ||
				!strings.Contains(result.body, "<h1>3 memories changed</h1>") {
				t.Fatalf("apply: %d\n%s", result.StatusCode, result.body)
			}
			owner := memory.ServerOwner(guildHome)
			for _, id := range ids {
				if !sw.get(t, guildHome, id).Deleted() {
					t.Errorf("#%d is live after the bulk forget", id)
				}
				hist, err := sw.s.Memories.History(t.Context(), owner, id)
				if err != nil {
					t.Fatal(err)
				}
				last := hist[len(hist)-1]
				if last.Action != memory.ActionDelete || last.Actor != memory.UserActor(sw.w.alice.ID) {
					t.Errorf("#%d's history ends with %s by %s", id, last.Action, last.Actor)
				}
			}
			undo := postBatch(sw.alice, sw.aliceCSRF, "undo", batchOf(result.body))
			if undo.StatusCode != http.StatusOK || !strings.Contains(undo.body, "3 memories were put back") {
				t.Fatalf("undo: %d\n%s", undo.StatusCode, undo.body)
			}
			for _, id := range ids {
				if m := sw.get(t, guildHome, id); m.Deleted() || (id == sw.pin.ID && !m.Pinned) {
					t.Errorf("#%d after the undo: %+v", id, m)
				}
			}
			if batchOf(undo.body) != "" {
				t.Error("the undo's page offers another batch")
			}
			// The same undo again finds every memory changed since: nothing moves.
			again := postBatch(sw.alice, sw.aliceCSRF, "undo", batchOf(result.body))
			if !strings.Contains(again.body, "3 memories changed since") || sw.get(t, guildHome, sw.general.ID).Deleted() {
				t.Errorf("the undo replayed:\n%s", again.body)
			}
		})
	}
}

// TestServerBulkEdits: pin, set type and add tag through the versioned write path, each
// memory only once in the batch (one already as the action leaves it is left out), and the
// undo restores each.
func TestServerBulkEdits(t *testing.T) {
	eng, _ := sqliteEngine(t)
	sw := newServerWorld(t, eng)
	resp := preview(sw.bob, sw.bobCSRF, "pin", "", []int64{sw.general.ID, sw.pin.ID}, nil)
	if !strings.Contains(resp.body, "1 more memory already is") || strings.Contains(resp.body, fmt.Sprintf(">#%d</a>", sw.pin.ID)) {
		t.Errorf("pinning a pinned memory is in the batch:\n%s", resp.body)
	}
	postBatch(sw.bob, sw.bobCSRF, "apply", batchOf(resp.body))
	if !sw.get(t, guildHome, sw.general.ID).Pinned {
		t.Error("the bulk pin did not pin")
	}
	resp = preview(sw.bob, sw.bobCSRF, "add_tag", "Raids", nil, url.Values{"channel": {chanGeneral}})
	if !strings.Contains(resp.body, "<td>no tags</td><td>raids</td>") {
		t.Fatalf("the add-tag preview:\n%s", resp.body)
	}
	result := postBatch(sw.bob, sw.bobCSRF, "apply", batchOf(resp.body))
	for _, id := range []int64{sw.general.ID, sw.pin.ID} {
		if m := sw.get(t, guildHome, id); len(m.Tags) != 1 || m.Tags[0] != "raids" {
			t.Errorf("#%d's tags after the bulk add: %v", id, m.Tags)
		}
	}
	postBatch(sw.bob, sw.bobCSRF, "undo", batchOf(result.body))
	if m := sw.get(t, guildHome, sw.general.ID); len(m.Tags) != 0 || !m.Pinned {
		t.Errorf("after the undo of the tags: %+v", m)
	}
	resp = preview(sw.bob, sw.bobCSRF, "set_type", "decision", []int64{sw.general.ID}, nil)
	postBatch(sw.bob, sw.bobCSRF, "apply", batchOf(resp.body))
	if m := sw.get(t, guildHome, sw.general.ID); m.Type != memory.TypeDecision {
		t.Errorf("type after the bulk set: %s", m.Type)
	}
	if got := preview(sw.bob, sw.bobCSRF, "set_type", "nonsense", []int64{sw.general.ID}, nil); got.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown type: %d", got.StatusCode)
	}
}

// TestServerBulkNotEditor: a member who may not edit the server's memory can neither
// preview nor apply, and nothing changes; a member who loses the role between preview and
// apply is refused at apply.
func TestServerBulkNotEditor(t *testing.T) {
	eng, _ := sqliteEngine(t)
	sw := newServerWorld(t, eng)
	if page := sw.carolB.get(home).body; strings.Contains(page, "/bulk/preview") || strings.Contains(page, `name="id"`) {
		t.Errorf("a non-editor's page offers bulk actions:\n%s", page)
	}
	if got := preview(sw.carolB, sw.carolCSRF, "forget", "", []int64{sw.general.ID}, nil); got.StatusCode != http.StatusForbidden {
		t.Errorf("a non-editor's preview: %d", got.StatusCode)
	}
	// Carol forges a batch with her own session's secret: still refused, she may not edit.
	_, forged := encodeBatch(t, testBatch{Kind: "apply", Guild: guildHome, Action: "forget",
		Items: [][2]int64{{sw.general.ID, int64(sw.general.Version)}}}, sw.carolCSRF)
	for _, step := range []string{"apply", "undo"} {
		if got := postBatch(sw.carolB, sw.carolCSRF, step, forged); got.StatusCode != http.StatusForbidden {
			t.Errorf("a non-editor's %s: %d", step, got.StatusCode)
		}
	}
	if sw.get(t, guildHome, sw.general.ID).Deleted() {
		t.Fatal("a non-editor forgot a memory")
	}
	if got := sw.carolB.post(home+"/bulk/preview", url.Values{"action": {"forget"}, "id": {fmt.Sprint(sw.general.ID)}}); got.StatusCode != http.StatusForbidden {
		t.Errorf("a preview without the CSRF token: %d", got.StatusCode)
	}
}

// TestServerBulkChangedSince: a memory changed between the preview and the apply is left
// as it is, counted and listed; the others are changed.
func TestServerBulkChangedSince(t *testing.T) {
	eng, _ := sqliteEngine(t)
	sw := newServerWorld(t, eng)
	resp := preview(sw.alice, sw.aliceCSRF, "add_tag", "urgent", []int64{sw.general.ID, sw.mods.ID}, nil)
	edited := "The raid moved to Saturday"
	if _, err := sw.s.Memories.Modify(t.Context(), memory.ServerOwner(guildHome), sw.general.ID, memory.Change{Content: &edited}, "test"); err != nil {
		t.Fatal(err)
	}
	result := postBatch(sw.alice, sw.aliceCSRF, "apply", batchOf(resp.body))
	if !strings.Contains(result.body, "1 memory changed since") || !strings.Contains(result.body, fmt.Sprintf(">#%d</a>", sw.general.ID)) ||
		!strings.Contains(result.body, "1 memory was changed") {
		t.Errorf("the result:\n%s", result.body)
	}
	if m := sw.get(t, guildHome, sw.general.ID); len(m.Tags) != 0 {
		t.Errorf("the memory changed since was tagged: %v", m.Tags)
	}
	if m := sw.get(t, guildHome, sw.mods.ID); len(m.Tags) != 1 {
		t.Errorf("the other memory was not tagged: %v", m.Tags)
	}
}

// TestServerBulkRefusesBatches: a batch altered in the browser, another session's batch,
// one made for another server and an undo batch used to apply are refused and change
// nothing; an id the member may not see (a hidden channel's, another server's) refuses the
// preview as a missing one does, and a batch forged with such an id changes nothing.
func TestServerBulkRefusesBatches(t *testing.T) {
	eng, _ := sqliteEngine(t)
	sw := newServerWorld(t, eng)
	resp := preview(sw.alice, sw.aliceCSRF, "forget", "", []int64{sw.general.ID}, nil)
	sealed := batchOf(resp.body)
	b := decodeBatch(t, sealed)

	b.Items = append(b.Items, [2]int64{sw.pin.ID, int64(sw.pin.Version) + 1})
	payload, _ := encodeBatch(t, b, "")
	_, mac, _ := strings.Cut(sealed, ".")
	otherGuild := b
	otherGuild.Guild, otherGuild.Items = guildOther, [][2]int64{{sw.elsewhere.ID, int64(sw.elsewhere.Version)}}
	_, forOther := encodeBatch(t, otherGuild, sw.aliceCSRF)
	asUndo := decodeBatch(t, sealed)
	asUndo.Kind = "undo"
	_, undoKind := encodeBatch(t, asUndo, sw.aliceCSRF)
	for name, try := range map[string]func() response{
		"Tampered":       func() response { return postBatch(sw.alice, sw.aliceCSRF, "apply", payload+"."+mac) },
		"Truncated":      func() response { return postBatch(sw.alice, sw.aliceCSRF, "apply", sealed[:len(sealed)-4]) },
		"AnotherSession": func() response { return postBatch(sw.bob, sw.bobCSRF, "apply", sealed) },
		"AnotherServer":  func() response { return postBatch(sw.alice, sw.aliceCSRF, "apply", forOther) },
		"UndoAsApply":    func() response { return postBatch(sw.alice, sw.aliceCSRF, "undo", sealed) },
		"ApplyAsUndo":    func() response { return postBatch(sw.alice, sw.aliceCSRF, "apply", undoKind) },
	} {
		t.Run(name, func(t *testing.T) {
			if got := try(); got.StatusCode != http.StatusBadRequest || !strings.Contains(got.body, "Batch refused") {
				t.Errorf("%d\n%s", got.StatusCode, got.body)
			}
			for _, m := range []*memory.Memory{sw.general, sw.pin} {
				if sw.get(t, guildHome, m.ID).Deleted() {
					t.Fatalf("#%d was forgotten", m.ID)
				}
			}
		})
	}

	t.Run("HiddenIDs", func(t *testing.T) {
		missing := preview(sw.bob, sw.bobCSRF, "forget", "", []int64{sw.elsewhere.ID + 1000}, nil)
		if missing.StatusCode != http.StatusNotFound {
			t.Fatalf("a missing id: %d", missing.StatusCode)
		}
		for name, id := range map[string]int64{"HiddenChannel": sw.mods.ID, "OtherServer": sw.elsewhere.ID} {
			got := preview(sw.bob, sw.bobCSRF, "forget", "", []int64{sw.general.ID, id}, nil)
			if got.StatusCode != http.StatusNotFound || got.body != missing.body {
				t.Errorf("%s: %d, and the page differs from a missing id's: %v", name, got.StatusCode, got.body != missing.body)
			}
		}
		all := preview(sw.bob, sw.bobCSRF, "forget", "", nil, url.Values{})
		if strings.Contains(all.body, sw.mods.Content) || !strings.Contains(all.body, sw.general.Content) {
			t.Errorf("Bob's everything-matching preview:\n%s", all.body)
		}
		// Bob's page holds his CSRF secret, so he can sign a batch himself: its ids are
		// checked again at apply, and those he may not see in this server change nothing.
		_, forged := encodeBatch(t, testBatch{Kind: "apply", Guild: guildHome, Action: "forget", Items: [][2]int64{
			{sw.mods.ID, int64(sw.mods.Version)}, {sw.elsewhere.ID, int64(sw.elsewhere.Version)}}}, sw.bobCSRF)
		got := postBatch(sw.bob, sw.bobCSRF, "apply", forged)
		if !strings.Contains(got.body, "0 memories were changed") || !strings.Contains(got.body, "2 memories changed since") {
			t.Errorf("a forged batch of hidden ids:\n%s", got.body)
		}
		if sw.get(t, guildHome, sw.mods.ID).Deleted() || sw.get(t, guildOther, sw.elsewhere.ID).Deleted() {
			t.Fatal("a forged batch forgot a memory its member may not see")
		}
		if strings.Contains(got.body, sw.mods.Content) || strings.Contains(got.body, sw.elsewhere.Content) {
			t.Error("the result shows the words of a memory its member may not see")
		}
	})
}

// TestServerBulkLimits: a batch may hold up to 5,000 memories, and a form of 5,000 ids fits
// the bulk routes' body limit; 5,001 are refused.
func TestServerBulkLimits(t *testing.T) {
	eng, _ := sqliteEngine(t)
	sw := newServerWorld(t, eng)
	ids := make([]int64, 5001)
	for i := range ids {
		ids[i] = sw.elsewhere.ID + 1000 + int64(i)
	}
	if got := preview(sw.bob, sw.bobCSRF, "pin", "", ids, nil); got.StatusCode != http.StatusBadRequest || !strings.Contains(got.body, "at most 5,000") {
		t.Errorf("5,001 ids: %d", got.StatusCode)
	}
	// 5,000 ids of no memory: the form is read (a 404 for the first unknown id), not refused for its size.
	if got := preview(sw.bob, sw.bobCSRF, "pin", "", ids[:5000], nil); got.StatusCode != http.StatusNotFound {
		t.Errorf("5,000 ids: %d", got.StatusCode)
	}
}
