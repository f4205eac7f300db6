package ltm_test

import (
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// Neighbourhood smoothing lifts the message beside a hit in the same channel, and never
// pulls in a neighbour from another scope or from a channel the audience cannot see, even
// when it was written between the two.
func TestRecallNeighboursStayInScopeAndAudience(t *testing.T) {
	s := testkit.MustOpenStore(t)
	at := func(guild, channel, content string) *memory.Memory {
		return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
			Provenance: memory.Provenance{ChannelID: channel}})
	}
	before := at("gA", "c-general", "anyone up for a walk on sunday")
	hit := at("gA", "c-general", "who is bringing the dice tonight")
	otherScope := at("gB", "c-general", "lol yes")
	hidden := at("gA", "c-mods", "ban the spammer please")
	reply := at("gA", "c-general", "me, the red ones")

	q := memory.SearchQuery{Text: "dice", Owners: []memory.Owner{memory.ServerOwner("gA")},
		Audience: &memory.Audience{Channels: map[string]bool{"c-general": true}}}
	res := mustSearch(t, s, q)
	if len(res) == 0 || res[0].Memory.ID != hit.ID {
		t.Fatalf("the hit should lead:%s", describe(res))
	}
	if _, ok := find(res, reply.ID); !ok {
		t.Errorf("the reply beside the hit was not lifted:%s", describe(res))
	}
	for _, id := range []int64{otherScope.ID, hidden.ID} {
		if _, ok := find(res, id); ok {
			t.Errorf("#%d from another scope or a hidden channel leaked in:%s", id, describe(res))
		}
	}
	// Hidden channel visible: the message in c-mods is still another channel's, never a
	// neighbour of a c-general hit.
	q.Audience = &memory.Audience{Channels: map[string]bool{"c-general": true, "c-mods": true}}
	if _, ok := find(mustSearch(t, s, q), hidden.ID); ok {
		t.Errorf("a message of another channel was lifted as a neighbour")
	}
	_ = before
}

// A turn that asks something lends part of its score to the answers that follow it, even
// two turns on, past the asker's own follow-up, in conversational recall only: never in a
// search people read as matches, and never to an answer in a channel the asker cannot see.
func TestRecallLiftsTheAnswerToAQuestion(t *testing.T) {
	s := testkit.MustOpenStore(t)
	say := func(channel, author, content string) *memory.Memory {
		return testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "gA", Content: content,
			Provenance: memory.Provenance{ChannelID: channel, Author: author}})
	}
	question := say("c-general", "Ana", "which board game are you bringing on friday?")
	say("c-general", "Ana", "anything works for me")
	answer := say("c-general", "Ben", "Catan, probably")
	say("c-general", "Cho", "unrelated: the server icon changed")
	say("c-general", "Dev", "nice")
	mods := say("c-mods", "Eve", "board game night needs a mod on friday?")
	modsAnswer := say("c-mods", "Fay", "I can do it")

	audience := &memory.Audience{Channels: map[string]bool{"c-general": true}}
	q := memory.SearchQuery{Text: "board game friday", Owners: []memory.Owner{memory.ServerOwner("gA")}, Audience: audience}
	res := mustSearch(t, s, q)
	if len(res) == 0 || res[0].Memory.ID != question.ID {
		t.Fatalf("the question should lead:%s", describe(res))
	}
	if _, ok := find(res, answer.ID); !ok {
		t.Errorf("the answer two turns after the question was not lifted:%s", describe(res))
	}
	for _, id := range []int64{mods.ID, modsAnswer.ID} {
		if _, ok := find(res, id); ok {
			t.Errorf("#%d of a channel the asker cannot see came in:%s", id, describe(res))
		}
	}
	q.MatchesOnly = true
	if _, ok := find(mustSearch(t, s, q), answer.ID); ok {
		t.Errorf("a search read as matches listed the answer, which does not match")
	}
}
