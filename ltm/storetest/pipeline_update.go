package storetest

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testPipelineUpdateEvidence: a pipeline UPDATE records the messages it was written from,
// as a create does. Deleting them undoes the update (the memory gets back the words it had,
// which rest on messages that are still there); a deliberate save updated by the pipeline
// gets its own words back the same way; the forget-me of the only author of an update
// removes the memory rewritten from their words, while an update written from two members'
// messages stays and its history no longer names the forgotten one.
func testPipelineUpdateEvidence(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	ctx := t.Context()
	const alice, bob, carol, guild = "100000000000000001", "200000000000000002", "300000000000000003", "400000000000000004"
	srv := memory.ServerOwner(guild)
	from := func(msg, user string) []memory.MessageRef {
		return []memory.MessageRef{{MessageID: msg, AuthorID: user}}
	}
	cursor := map[string]int{} // each channel's extraction cursor
	applyIn := func(channel string, ps ...memory.Proposal) []memory.ProposalOutcome {
		t.Helper()
		for i := range ps {
			ps[i].MayEditServer = true
		}
		out := mustApply(t, f, memory.PipelineBatch{GuildID: guild, ChannelID: channel, CursorFrom: int64(cursor[channel]),
			CursorTo: int64(cursor[channel] + 1), Proposals: ps})
		cursor[channel]++
		return out
	}
	apply := func(ps ...memory.Proposal) []memory.ProposalOutcome {
		t.Helper()
		return applyIn("c1", ps...)
	}
	created := func(content, msg, user string) int64 {
		t.Helper()
		p := addProposal(srv, content, nil)
		p.Evidence = from(msg, user)
		out := apply(p)
		if out[0].Action != memory.ActionCreate {
			t.Fatalf("create %q: %+v", content, out[0])
		}
		return out[0].MemoryID
	}
	update := func(id int64, content string, evidence ...memory.MessageRef) {
		t.Helper()
		out := apply(memory.Proposal{Action: memory.ProposeUpdate, Owner: srv, TargetID: id, Reason: "changed",
			Memory: memory.Memory{Content: content}, Evidence: evidence})
		if out[0].Action != memory.ActionUpdate {
			t.Fatalf("update #%d: %+v", id, out[0])
		}
	}
	content := func(id int64) string {
		t.Helper()
		m, err := s.Memories.Get(ctx, srv, id)
		if err != nil {
			t.Fatalf("memory #%d: %v", id, err)
		}
		return m.Content
	}

	t.Run("UndoingAMoveTakesItBack", func(t *testing.T) {
		// Learned in c0, rewritten from a message in c1 (which moves it to c1): once that
		// message is deleted its c0 words go back to c0, not stay where c1's readers see them.
		p := addProposal(srv, "The treasurer keeps the receipts", nil)
		p.Evidence = from("m-alice-treasurer", alice)
		p.Memory.Provenance.ChannelID = "c0" // as the pipeline writes a fact said in c0
		out := applyIn("c0", p)
		id := out[0].MemoryID
		update(id, "The treasurer keeps the receipts in the blue box", from("m-bob-treasurer", bob)...)
		if _, err := s.Transcripts.DeleteMessages(ctx, guild, "c1", []string{"m-bob-treasurer"}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Memories.Get(ctx, srv, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Content != "The treasurer keeps the receipts" || m.Provenance.ChannelID != "c0" {
			t.Fatalf("after deleting the update's message: %q in %q, want the words before it back in c0", m.Content, m.Provenance.ChannelID)
		}
	})

	t.Run("DeletingTheUpdateMessageUndoesIt", func(t *testing.T) {
		id := created("The raid starts at eight", "m-alice-raid", alice)
		update(id, "The raid starts at nine, bring quinoapelican4411", from("m-bob-raid", bob)...)
		res, err := s.Transcripts.DeleteMessages(ctx, guild, "c1", []string{"m-bob-raid"})
		if err != nil {
			t.Fatal(err)
		}
		if got := content(id); got != "The raid starts at eight" {
			t.Fatalf("after deleting the update's message the memory says %q, want the words before it", got)
		}
		if len(res.Reverted) != 1 || res.Reverted[0].ID != id || len(res.Forgotten) != 0 {
			t.Fatalf("change %+v, want #%d reverted", res, id)
		}
		// The words that stay rest on Alice's message, as before the update.
		res, err = s.Transcripts.DeleteMessages(ctx, guild, "c1", []string{"m-alice-raid"})
		if err != nil || len(res.Forgotten) != 1 || res.Forgotten[0].ID != id {
			t.Fatalf("deleting the create's message = %+v %v, want #%d forgotten", res, err, id)
		}
	})
	t.Run("DeliberateSaveGetsItsWordsBack", func(t *testing.T) {
		saved := mustRemember(t, s, server(guild, "The guild colours are green"))
		update(saved.ID, "The guild colours are green and mauvebadger3306", from("m-bob-colours", bob)...)
		if _, err := s.Transcripts.DeleteMessages(ctx, guild, "c1", []string{"m-bob-colours"}); err != nil {
			t.Fatal(err)
		}
		if got := content(saved.ID); got != saved.Content {
			t.Fatalf("the saved memory says %q, want %q again", got, saved.Content)
		}
	})
	t.Run("ForgetMeRemovesWhatTheyRewrote", func(t *testing.T) {
		rewritten := created("The bake sale is in June", "m-alice-bake", alice)
		update(rewritten, "The bake sale is in July, says okapiquince7720", from("m-carol-bake", carol)...)
		shared := created("The quiz night is monthly", "m-alice-quiz", alice)
		update(shared, "The quiz night is weekly", append(from("m-carol-quiz", carol), from("m-bob-quiz", bob)...)...)
		preview, err := s.ForgetMe.PreviewForgetMe(ctx, carol)
		if err != nil {
			t.Fatal(err)
		}
		if preview.FromMessages != 1 {
			t.Errorf("preview counts %d memories from her messages, want 1", preview.FromMessages)
		}
		if _, err := s.ForgetMe.ConfirmForgetMe(ctx, carol, preview.Token); err != nil {
			t.Fatal(err)
		}
		_, err = s.Memories.Get(ctx, srv, rewritten)
		wantCode(t, err, memory.ENOTFOUND)
		if got := content(shared); got != "The quiz night is weekly" {
			t.Errorf("the memory rewritten from two members' messages says %q", got)
		}
		for _, ev := range scopeHistoryOf(t, s, srv) {
			if strings.Contains(ev.OldContent+ev.NewContent, "okapiquince7720") {
				t.Errorf("a history row holds her words: %+v", ev)
			}
			if strings.Contains(string(ev.Metadata), carol) {
				t.Errorf("a history row still names her: %+v", ev)
			}
		}
	})
}
