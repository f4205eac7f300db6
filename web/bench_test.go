package web_test

import (
	"fmt"
	"net/http"
	"testing"

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
