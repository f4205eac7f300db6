package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// testGuildPurgeProposals: the pipeline's proposals from a guild's conversations that
// never became a memory (a shadow row, a duplicate) stay in members' personal history with
// their words until the guild is purged; the purge removes them, and a proposal from a DM
// conversation in the same personal scope stays.
func testGuildPurgeProposals(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	f := factsOf(t, s)
	_, g, _ := guildsOf(t, s)
	ctx := t.Context()
	me := memory.PersonalOwner("u1")
	kept := mustRemember(t, s, personal("u1", "g1", "Alice grows tomatoes"))
	shadow := addProposal(me, "Alice secretly collects jackalopeteal6650", map[string]any{"job": 7})
	shadow.Record = memory.ActionShadow
	dup := addProposal(me, "Alice grows tomatoes", nil)
	mustApply(t, f, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", Proposals: []memory.Proposal{shadow, dup}})
	inDM := addProposal(me, "Alice hums survivorgannet1357", nil)
	inDM.Record = memory.ActionShadow
	mustApply(t, f, memory.PipelineBatch{ChannelID: "dm1", Proposals: []memory.Proposal{inDM}})
	if _, err := g.PurgeGuild(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	var dmKept bool
	for _, ev := range scopeHistoryOf(t, s, me) {
		text := ev.OldContent + ev.NewContent + string(ev.Metadata)
		if strings.Contains(text, "jackalopeteal6650") || strings.Contains(text, kept.Content) {
			t.Errorf("a history row quotes the purged guild's conversation: %+v", ev)
		}
		dmKept = dmKept || strings.Contains(text, "survivorgannet1357")
	}
	if !dmKept {
		t.Error("the proposal from a DM conversation was purged with the guild")
	}
}

// testGuildPurgeJobRows: a pipeline row written before history recorded origins names
// only the extraction job it came from; the purge of the job's guild removes it (before
// the jobs go), and a row of another guild's job stays.
func testGuildPurgeJobRows(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Exec == nil {
		t.Skip("the store runs no raw statements")
	}
	_, g, _ := guildsOf(t, s)
	ctx := t.Context()
	me := memory.PersonalOwner("u1")
	for _, guild := range []string{"g1", "g2"} {
		id, _, err := s.Jobs.Enqueue(ctx, "extract", "extract:"+guild,
			map[string]string{"guild_id": guild, "channel_id": "c1"}, memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(ctx, fmt.Sprintf(`INSERT INTO memory_history (scope_key, action, new_content, actor, metadata,
			created_at) VALUES ('%s', '%s', 'Alice said in %s: wombatlantern', '%s', '{"job": %d, "fact": 0}', 1)`,
			me.Key(), memory.ActionShadow, guild, memory.ActorPipeline, id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.PurgeGuild(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	var otherKept bool
	for _, ev := range scopeHistoryOf(t, s, me) {
		if strings.Contains(ev.NewContent, "in g1") {
			t.Errorf("a history row of the purged guild's job stayed: %+v", ev)
		}
		otherKept = otherKept || strings.Contains(ev.NewContent, "in g2")
	}
	if !otherKept {
		t.Error("the row of another guild's job was purged")
	}
}
