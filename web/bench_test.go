package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/web"
)

// BenchmarkMyMemory measures "My memory" served over TLS to a signed-in browser, on
// SQLite, for a member with n personal memories: the first page of the list (the session
// lookup, the member's audience, two counts, the last change and the render) and a search.
//
//	go test ./web/ -run '^$' -bench MyMemory -benchtime 200x
func BenchmarkMyMemory(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		eng, _ := sqliteEngine(b)
		w := newWorld(b)
		s := eng.open(b)
		storeRules(b, s)
		f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopePersonal}
		for i := range n {
			f.Memories = append(f.Memories, memory.ExportMemory{Type: memory.TypeFact,
				Content: fmt.Sprintf("Note %d: the %s meeting moved to room %d", i, []string{"design", "budget", "release"}[i%3], i%40)})
		}
		if _, err := s.Transfer.Import(b.Context(), memory.PersonalOwner(w.alice.ID), f, memory.UserActor(w.alice.ID)); err != nil {
			b.Fatal(err)
		}
		d := newDashboard(b, w, s, func(c *web.Config) { c.AddressPerMinute, c.SessionPerMinute = 1<<30, 1<<30 })
		br := d.browser()
		br.signIn(w.alice)
		for _, page := range []struct{ name, path string }{{"List", "/me"}, {"Search", "/me?q=budget+meeting+room"}} {
			b.Run(fmt.Sprintf("%s/%d", page.name, n), func(b *testing.B) {
				br.t = b
				for b.Loop() {
					if resp := br.getNoFollow(page.path); resp.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %d", page.path, resp.StatusCode)
					}
				}
			})
		}
	}
}

// BenchmarkServerPages measures a server's memory page for a 100,000-memory server on SQLite,
// served over TLS to a signed-in editor: the first page of the list, a search, and the bulk
// preview of everything a filter matches, 5,000 memories (each looked up, compared and
// rendered, the batch signed), beside the bare store reads of the list and the search in the
// same run. Each reports its p50 and p99 in milliseconds.
//
//	go test ./web/ -run '^$' -bench ServerPages -benchtime 20x
func BenchmarkServerPages(b *testing.B) {
	const total, batch = 100_000, 5000
	eng, _ := sqliteEngine(b)
	w := newWorld(b)
	s := eng.open(b)
	storeRules(b, s)
	gs, err := s.Settings.GuildSettings(b.Context(), guildHome)
	if err != nil {
		b.Fatal(err)
	}
	gs.GuildID, gs.EditorRoleID = guildHome, roleEditor
	if err := s.Settings.SaveGuildSettings(b.Context(), gs); err != nil {
		b.Fatal(err)
	}
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice, Roles: []string{roleMod, roleEditor}})
	f := memory.ExportFile{Format: memory.ExportFormat, Scope: memory.ScopeServer}
	topics := []string{"design", "budget", "release", "raid", "wiki", "event"}
	for i := range total {
		m := memory.ExportMemory{Type: memory.Types[i%len(memory.Types)],
			Content: fmt.Sprintf("Note %d: the %s meeting moved to room %d", i, topics[i%len(topics)], i%40),
			Provenance: memory.Provenance{AuthorID: fmt.Sprint(600000000000000000 + i%50), Author: fmt.Sprintf("member%d", i%50),
				ChannelID: []string{chanGeneral, chanMods}[i%2]}}
		if i < batch {
			m.Tags = []string{"cleanup"}
		}
		f.Memories = append(f.Memories, m)
	}
	if _, err := s.Transfer.Import(b.Context(), memory.ServerOwner(guildHome), f, memory.UserActor(w.alice.ID)); err != nil {
		b.Fatal(err)
	}
	d := newDashboard(b, w, s, func(c *web.Config) { c.AddressPerMinute, c.SessionPerMinute = 1<<30, 1<<30 })
	br := d.browser()
	csrf := csrfOf(b, br.signIn(w.alice).body)
	home := "/servers/" + guildHome
	previewForm := url.Values{"csrf": {csrf}, "action": {"pin"}, "scope": {"filter"}, "tag": {"cleanup"}}
	for _, page := range []struct {
		name string
		do   func() response
		want string
	}{
		{"List", func() response { return br.getNoFollow(home) }, "100000 memories"},
		{"Search", func() response { return br.getNoFollow(home + "?q=budget+meeting+room") }, "memories match"},
		{"BulkPreview5000", func() response { return br.post(home+"/bulk/preview", previewForm) }, "Preview: 5000 memories change"},
	} {
		b.Run(page.name, func(b *testing.B) {
			br.t = b
			timed(b, func() {
				if resp := page.do(); resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, page.want) {
					b.Fatalf("%s: %d, without %q", page.name, resp.StatusCode, page.want)
				}
			})
		})
	}
	// Baselines in the same run: the store reads the list and search pages start from,
	// without the session, the audience, the counts by channel and member, and the render.
	aud := &memory.Audience{Channels: map[string]bool{chanGeneral: true, chanMods: true}}
	b.Run("StoreList", func(b *testing.B) {
		timed(b, func() {
			if _, n, err := s.Memories.List(b.Context(), memory.ServerOwner(guildHome), memory.ListOptions{Limit: 20, Audience: aud}); err != nil || n != total {
				b.Fatalf("list: %d, %v", n, err)
			}
		})
	})
	b.Run("StoreSearch", func(b *testing.B) {
		timed(b, func() {
			if _, err := s.Recall.Search(b.Context(), memory.SearchQuery{Text: "budget meeting room", Owners: []memory.Owner{memory.ServerOwner(guildHome)},
				Limit: 20, Audience: aud, MatchesOnly: true}); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// timed runs do once per benchmark iteration and reports the p50 and p99 of its time in
// milliseconds.
func timed(b *testing.B, do func()) {
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		do()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
