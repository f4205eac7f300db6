package ltm

import (
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// TestSearchExplains: with Explain, each result says which stages moved it: a question
// naming a day marks the memory said that day with the date stage, and a reply lifted by
// the question before it in the same conversation names that question as the lender;
// without Explain no result carries an explanation.
func TestSearchExplains(t *testing.T) {
	s := openLexiconStore(t)
	ctx := t.Context()
	day := time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC)
	question := rememberInChannel(t, s, "g1", "c1", "Aiko", "Which board game are you bringing on Saturday?", day)
	answer := rememberInChannel(t, s, "g1", "c1", "Kenji", "Catan, probably", day.Add(time.Minute))
	for i, filler := range []string{"Backups run nightly", "The bot answers in Japanese", "Mika is learning Rust"} {
		rememberInChannel(t, s, "g1", "c2", "Ren", filler, day.AddDate(0, 0, -3-i))
	}
	q := memory.SearchQuery{Text: "which board game on 7 March?", Owners: []memory.Owner{memory.ServerOwner("g1")}, KeywordOnly: true,
		AskedAt: day.AddDate(0, 0, 2), Explain: true}
	res, err := s.Recall.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	why := map[int64][]memory.Factor{}
	for _, r := range res {
		why[r.Memory.ID] = r.Why
	}
	if !slices.ContainsFunc(why[question.ID], func(f memory.Factor) bool { return f.Stage == recall.FactorDate && f.Times > 1 }) {
		t.Errorf("the question said on 7 March is not marked by the date stage: %+v", why[question.ID])
	}
	if !slices.ContainsFunc(why[answer.ID], func(f memory.Factor) bool {
		return f.Stage == recall.FactorConversation && f.By == question.ID
	}) {
		t.Errorf("the reply is not marked as lifted by the question #%d: %+v", question.ID, why[answer.ID])
	}
	q.Explain = false
	if res, err = s.Recall.Search(ctx, q); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Why != nil {
			t.Errorf("#%d carries an explanation nobody asked for: %+v", r.Memory.ID, r.Why)
		}
	}
}

func rememberInChannel(t *testing.T, s *Store, guild, channel, author, content string, at time.Time) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
		CreatedAt: at, Provenance: memory.Provenance{Author: author, ChannelID: channel}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}
