package storetest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// KeywordIndex is a store's view of its in-memory keyword indexes.
type KeywordIndex interface {
	// KeywordIndexHolds reports whether any in-memory keyword index holds word.
	KeywordIndexHolds(word string) bool
}

// testForgetMe: the preview counts without erasing; its token works once, only for its
// member and only before it expires; afterwards nothing of the member is found by any read
// (nor, for a file-backed store, in the bytes of its files), and everyone else's data is
// intact. ltm's TestForgetMeCompleteness covers more places (pipeline writes, the query
// cache, the full-text vocabularies), which only SQLite has today.
func testForgetMe(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ctx := t.Context()
	const (
		alice, bob = "100000000000000001", "200000000000000002"
		guild      = "300000000000000003"
	)
	aliceMe, bobMe, srv := memory.PersonalOwner(alice), memory.PersonalOwner(bob), memory.ServerOwner(guild)
	// One unique word per place that can hold Alice's words: different first letters (no
	// shared prefix in a word index) and a digit tail (no stemming).
	secret := map[string]string{
		"personal":         "quokkazebra7731",
		"personal-deleted": "vermilionyak4402",
		"edited-away":      "xylophoneibis5518",
		"edited-to":        "jacarandaemu6093",
		"server-about":     "hummingbirdokapi2284",
		"remember-this":    "kestrelnarwhal3317",
		"from-messages":    "mongoosetapir1175",
		"author-name":      "rhinocerosgecko4480",
		"turn":             "sealionwalrus7204",
		"reply":            "tortoiseunicorn3391",
		"queued-job":       "platypusiguana6627",
		"leased-job":       "gazelleflamingo8437",
	}
	survivor := map[string]string{
		"bob-personal":   "wombatcapybara1234",
		"bob-turn":       "survivorpelican5678",
		"alice-authored": "survivorbadger3456",
		"shared":         "survivorcheetah7788",
	}
	remember := func(m memory.Memory, actor memory.Actor, evidence ...memory.MessageRef) *memory.Memory {
		t.Helper()
		res, err := s.Memories.RememberAs(ctx, memory.WriteContext{WriterID: "writer", GuildID: guild, ChannelID: "c1"}, m, actor, evidence...)
		if err != nil || !res.Created {
			t.Fatalf("remember %q: %+v %v", m.Content, res, err)
		}
		return res.Memory
	}
	aliceSays := memory.Provenance{AuthorID: alice, Author: "Alice " + secret["author-name"], ChannelID: "c1", MessageID: "m1"}

	// Alice's personal memories: live, forgotten, and edited (history keeps both texts).
	own := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "My word is " + secret["personal"],
		Provenance: aliceSays}, memory.UserActor(alice))
	gone := remember(personal(alice, "", "I once said "+secret["personal-deleted"]), memory.UserActor(alice))
	if _, err := s.Memories.Forget(ctx, aliceMe, []int64{gone.ID}, memory.UserActor(alice), ""); err != nil {
		t.Fatal(err)
	}
	edited := remember(personal(alice, "", "I like "+secret["edited-away"]), memory.ModelActor(alice))
	to := "I like " + secret["edited-to"]
	if _, err := s.Memories.Modify(ctx, aliceMe, edited.ID, memory.Change{Content: &to}, memory.UserActor(alice)); err != nil {
		t.Fatal(err)
	}
	// A server fact about Alice, and Bob's Remember-this copy of her message.
	about := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, SubjectID: alice,
		Content: "Alice is called " + secret["server-about"]}, memory.UserActor(bob))
	copyOfAlice := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: bob, SubjectID: alice,
		Content: "Alice said " + secret["remember-this"], Provenance: aliceSays}, memory.UserActor(bob),
		memory.MessageRef{MessageID: "m-alice-1", AuthorID: alice})
	// A server fact the pipeline learned from Alice's message alone, and one learned from
	// Alice and Bob together (which stays).
	fromAlice := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Source: memory.SourcePipeline,
		Content: "The release is named " + secret["from-messages"]}, memory.ActorPipeline,
		memory.MessageRef{MessageID: "m-alice-3", AuthorID: alice})
	shared := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Source: memory.SourcePipeline,
		Content: "The team agreed on " + survivor["shared"]}, memory.ActorPipeline,
		memory.MessageRef{MessageID: "m-alice-2", AuthorID: alice}, memory.MessageRef{MessageID: "m-bob-2", AuthorID: bob})
	// Server knowledge Alice added: it stays, without her name; she also edited it.
	authored := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
		Content: "The wiki lives at " + survivor["alice-authored"], Provenance: aliceSays}, memory.UserActor(alice))
	pin := true
	if _, err := s.Memories.Modify(ctx, srv, authored.ID, memory.Change{Pinned: &pin}, memory.UserActor(alice)); err != nil {
		t.Fatal(err)
	}
	// Transcripts: Alice's message, the bot's reply to her, and Bob's message.
	for _, turn := range []memory.Turn{
		{GuildID: guild, ChannelID: "c1", UserID: alice, AuthorName: "Alice", Role: memory.RoleUser, Content: "hi " + secret["turn"], MessageID: "m-alice-4"},
		{GuildID: guild, ChannelID: "c1", UserID: alice, Role: memory.RoleAssistant, Content: "hello " + secret["reply"]},
		{GuildID: guild, ChannelID: "c1", UserID: bob, AuthorName: "Bob", Role: memory.RoleUser, Content: "hey " + survivor["bob-turn"], MessageID: "m-bob-4"},
	} {
		if _, err := s.Transcripts.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	// Pipeline jobs whose checkpoints hold Alice's words: one waiting, one running.
	queued, _, err := s.Jobs.Enqueue(ctx, "extract", "g/queued", checkpoint(guild, "Alice likes "+secret["queued-job"]),
		memory.EnqueueOptions{RunAfter: s.Clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "g/running", checkpoint(guild, ""), memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := s.Jobs.Lease(ctx, "worker-1", []string{"extract"}, time.Minute)
	if err != nil || running == nil {
		t.Fatalf("lease: %+v %v", running, err)
	}
	if err := s.Jobs.Heartbeat(ctx, running.ID, running.LeaseOwner, time.Minute, checkpoint(guild, "Alice likes "+secret["leased-job"])); err != nil {
		t.Fatal(err)
	}
	// Bob's own data.
	bobOwn := mustRemember(t, s, personal(bob, "", "Bob's word is "+survivor["bob-personal"]))
	// Web dashboard sessions: hers must go with the rest (the byte scan finds her token's
	// hash nowhere), Bob's stays.
	if s.Sessions != nil {
		secret["web-session"], survivor["bob-web-session"] = "5e55a1ce7a0be6a11ce0f0a11ce5e55", "b0bb5e55b0bb5e55b0bb5e55b0bb5e55"
		for token, user := range map[string]string{secret["web-session"]: alice, survivor["bob-web-session"]: bob} {
			if _, err := s.Sessions.Create(ctx, memory.WebSession{TokenHash: token, UserID: user, CSRF: "csrf"}, 7*24*time.Hour); err != nil {
				t.Fatal(err)
			}
		}
	}

	removed := []struct {
		owner memory.Owner
		id    int64
	}{{aliceMe, own.ID}, {aliceMe, gone.ID}, {aliceMe, edited.ID}, {srv, about.ID}, {bobMe, copyOfAlice.ID}, {srv, fromAlice.ID}}
	want := memory.ForgetMeSummary{Memories: 3, About: 2, FromMessages: 1, Anonymised: 1, Turns: 2, Jobs: 2}
	counts := func(sum memory.ForgetMeSummary) memory.ForgetMeSummary {
		sum.Token, sum.ExpiresAt = "", time.Time{}
		return sum
	}

	// Searches of every scope load the in-memory keyword indexes with her words.
	indexed := []string{"personal", "server-about", "author-name", "remember-this", "from-messages"}
	if s.Keywords != nil {
		for _, owner := range []memory.Owner{aliceMe, srv, bobMe} {
			searchIDs(t, s, "word", owner)
		}
		for _, place := range indexed {
			if !s.Keywords.KeywordIndexHolds(secret[place]) {
				t.Fatalf("%s: the keyword index never held %q, so its check below proves nothing", place, secret[place])
			}
		}
	}

	preview, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("PreviewCountsAndErasesNothing", func(t *testing.T) {
		if got := counts(preview); got != want {
			t.Errorf("preview counts %+v, want %+v", got, want)
		}
		if preview.Token == "" || !preview.ExpiresAt.Equal(s.Clock.Now().Add(s.ConfirmTTL)) {
			t.Errorf("preview token %q expires %v", preview.Token, preview.ExpiresAt)
		}
		if !isLive(t, s, aliceMe, own.ID) || !isLive(t, s, srv, about.ID) {
			t.Error("the preview erased memories")
		}
		if n, err := s.Transcripts.CountTurns(ctx, alice); err != nil || n != 2 {
			t.Errorf("turns after the preview: %d %v", n, err)
		}
	})
	t.Run("ErrTokenOfAnotherMember", func(t *testing.T) {
		_, err := s.ForgetMe.ConfirmForgetMe(ctx, bob, preview.Token)
		wantCode(t, err, memory.ENOTFOUND)
		if !isLive(t, s, bobMe, bobOwn.ID) || !isLive(t, s, aliceMe, own.ID) {
			t.Fatal("a token used by another member erased data")
		}
	})
	t.Run("ErrTokenExpired", func(t *testing.T) {
		p, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		s.Clock.Advance(s.ConfirmTTL + time.Second)
		_, err = s.ForgetMe.ConfirmForgetMe(ctx, alice, p.Token)
		wantCode(t, err, memory.EEXPIRED)
		if !isLive(t, s, aliceMe, own.ID) {
			t.Fatal("an expired token erased data")
		}
	})
	// The first preview expired with the clock; a fresh one confirms.
	preview, err = s.ForgetMe.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ConfirmErasesWhatThePreviewCounted", func(t *testing.T) {
		if got := counts(sum); got != want {
			t.Errorf("erased %+v, want %+v", got, want)
		}
	})
	t.Run("NothingOfTheMemberIsFound", func(t *testing.T) {
		for _, r := range removed {
			_, err := s.Memories.Get(ctx, r.owner, r.id)
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.History(ctx, r.owner, r.id)
			wantCode(t, err, memory.ENOTFOUND)
			_, err = s.Memories.Recover(ctx, r.owner, r.id, 0, "user:"+alice)
			wantCode(t, err, memory.ENOTFOUND)
		}
		for _, owner := range []memory.Owner{aliceMe, srv, bobMe} {
			for _, deleted := range []bool{false, true} {
				list, _, err := s.Memories.List(ctx, owner, memory.ListOptions{Deleted: deleted, Limit: 500})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range list {
					for place, word := range secret {
						if strings.Contains(m.Content, word) || strings.Contains(m.Provenance.Author, word) {
							t.Errorf("%s: List of %v (deleted=%v) shows %+v", place, owner, deleted, m)
						}
					}
				}
			}
			for place, word := range secret {
				if ids := searchIDs(t, s, word, owner); len(ids) != 0 {
					t.Errorf("%s: search of %v for %q found %v", place, owner, word, ids)
				}
			}
		}
		hist, err := s.Memories.ScopeHistory(ctx, aliceMe, 0)
		if err != nil {
			t.Fatal(err)
		}
		// One row without content records that forget-me happened; nothing else is left.
		if len(hist) != 1 || hist[0].Action != memory.ActionPurge || hist[0].OldContent != "" || hist[0].NewContent != "" {
			t.Errorf("history of her scope after forget-me = %+v, want one purge row without content", hist)
		}
		for _, who := range []string{alice, bob} {
			turns, err := s.Transcripts.RecentTurns(ctx, guild, "c1", who, 100)
			if err != nil {
				t.Fatal(err)
			}
			after, err := s.Transcripts.TurnsAfter(ctx, guild, "c1", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, turn := range append(turns, after...) {
				if turn.UserID == alice {
					t.Errorf("a turn of hers survived: %+v", turn)
				}
			}
		}
		if n, err := s.Transcripts.CountTurns(ctx, alice); err != nil || n != 0 {
			t.Errorf("%d turns of hers counted (%v)", n, err)
		}
	})
	t.Run("JobsHoldNoneOfHerWords", func(t *testing.T) {
		err := s.Jobs.Heartbeat(ctx, running.ID, running.LeaseOwner, time.Minute, checkpoint(guild, "Alice likes "+secret["leased-job"]))
		if !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("heartbeat of a job running during forget-me: %v, want ErrLeaseLost", err)
		}
		for _, id := range []int64{queued, running.ID} {
			j, err := s.Jobs.GetJob(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if payloadKeys(t, j)["checkpoint"] || j.State != memory.JobQueued {
				t.Errorf("job %d after forget-me: state %s, payload %s; want queued without a checkpoint", id, j.State, j.Payload)
			}
		}
	})
	t.Run("OthersIntact", func(t *testing.T) {
		if m, err := s.Memories.Get(ctx, bobMe, bobOwn.ID); err != nil || m.Content != bobOwn.Content {
			t.Errorf("Bob's personal memory: %v %v", m, err)
		}
		if m, err := s.Memories.Get(ctx, srv, shared.ID); err != nil || m.Content != shared.Content {
			t.Errorf("the memory learned from Alice and Bob together: %v %v", m, err)
		}
		m, err := s.Memories.Get(ctx, srv, authored.ID)
		if err != nil || m.Content != authored.Content || !m.Pinned {
			t.Fatalf("the server memory Alice added: %+v %v", m, err)
		}
		if m.Provenance.AuthorID != "" || m.Provenance.Author != "" || m.Provenance.MessageID != "" {
			t.Errorf("the server memory Alice added still names her: %+v", m.Provenance)
		}
		hist, err := s.Memories.History(ctx, srv, authored.ID)
		if err != nil || len(hist) != 2 {
			t.Fatalf("history of the memory Alice added: %+v %v, want its 2 rows", hist, err)
		}
		for _, ev := range hist {
			if strings.Contains(string(ev.Actor), alice) {
				t.Errorf("history of the memory Alice added still names her: %+v", ev)
			}
		}
		turns, err := s.Transcripts.RecentTurns(ctx, guild, "c1", bob, 100)
		if err != nil || len(turns) != 1 || turns[0].UserID != bob {
			t.Errorf("Bob's turns: %+v %v", turns, err)
		}
		if s.Sessions != nil {
			if _, err := s.Sessions.Lookup(ctx, secret["web-session"]); memory.ErrorCode(err) != memory.ENOTFOUND {
				t.Errorf("her web session after forget-me: %v, want not found", err)
			}
			if ws, err := s.Sessions.Lookup(ctx, survivor["bob-web-session"]); err != nil || ws.UserID != bob {
				t.Errorf("Bob's web session: %+v %v", ws, err)
			}
		}
	})
	if s.Keywords != nil {
		t.Run("KeywordIndexForgetsHerWords", func(t *testing.T) {
			// The next search brings the indexes up to date; no read of them happens before.
			searchIDs(t, s, "word", bobMe)
			for place, word := range secret {
				if s.Keywords.KeywordIndexHolds(word) {
					t.Errorf("%s: %q is still in an in-memory keyword index", place, word)
				}
			}
			for _, place := range []string{"bob-personal", "alice-authored"} {
				if !s.Keywords.KeywordIndexHolds(survivor[place]) {
					t.Errorf("%s: %q left the keyword index, but it was not hers", place, survivor[place])
				}
			}
		})
	}
	t.Run("TokenIsSingleUse", func(t *testing.T) {
		again := mustRemember(t, s, personal(alice, "", "I am back"))
		_, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token)
		if code := memory.ErrorCode(err); code != memory.ENOTFOUND && code != memory.ECONFLICT {
			t.Fatalf("reused token: %v, want not found or conflict", err)
		}
		if !isLive(t, s, aliceMe, again.ID) {
			t.Fatal("a reused token erased data written after forget-me")
		}
	})
	if s.Raw != nil {
		t.Run("NoBytesLeft", func(t *testing.T) { scanFiles(t, s.Raw, secret, survivor) })
	}
}

// checkpoint is an extraction job payload of a channel holding model results.
func checkpoint(guild, fact string) map[string]any {
	return map[string]any{"guild_id": guild, "channel_id": "c1",
		"checkpoint": map[string]any{"extraction": map[string]any{"facts": []string{fact}}}}
}

// scanFiles fails when any word of gone is in the bytes of the store's files, and proves
// the scan sees data by finding every word of kept.
func scanFiles(t *testing.T, raw RawAccess, gone, kept map[string]string) {
	files, err := raw.DataFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
		for place, word := range gone {
			// The suffix too: a word index may store a term after a prefix it shares.
			for _, needle := range []string{word, word[4:]} {
				if bytes.Contains(b, []byte(needle)) {
					t.Errorf("%s: %q (%s) is still in the bytes of %s", place, needle, word, filepath.Base(f))
				}
			}
		}
	}
	for place, word := range kept {
		if !bytes.Contains(all, []byte(word)) {
			t.Errorf("%s: %q is missing from the store's files, so the scan proves nothing", place, word)
		}
	}
}
