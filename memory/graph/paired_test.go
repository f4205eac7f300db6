package graph_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory/graph"
)

// TestLinkNamesPairedWithAPerson: a capitalised word starting a sentence is a person when
// "and" or "&" joins it to a person the text names beyond doubt (a known first name, a
// member's display name, a Discord mention); a sentence's first word beside a comma, or
// beside a word that names nobody, stays a word.
func TestLinkNamesPairedWithAPerson(t *testing.T) {
	members := graph.Context{People: []graph.Person{{UserID: "42", Name: "Zoltan"}}}
	for _, c := range []struct {
		text   string
		ctx    graph.Context
		want   string // a person the linker must find ("" for none beyond the others)
		absent string // a name it must not find
	}{
		{"Tomasz and Priya run the server", graph.Context{}, "Tomasz", ""},
		{"Tomasz & <@42> host tonight", graph.Context{}, "Tomasz", ""},
		{"Bartek and Zoltan fixed the bot", members, "Bartek", ""},
		{"We asked Priya and Tomasz", graph.Context{}, "Tomasz", ""},
		{"Yesterday, Priya said hi", graph.Context{}, "", "Yesterday"},
		{"Tonight and tomorrow are busy", graph.Context{}, "", "Tonight"},
	} {
		ents := graph.Link(c.text, c.ctx)
		found := func(name string) (graph.Entity, bool) {
			for _, e := range ents {
				if e.Name == name {
					return e, true
				}
			}
			return graph.Entity{}, false
		}
		if c.want != "" {
			if e, ok := found(c.want); !ok || e.Kind != graph.KindPerson {
				t.Errorf("%q: want the person %q, got %+v", c.text, c.want, ents)
			}
		}
		if c.absent != "" {
			if _, ok := found(c.absent); ok {
				t.Errorf("%q: %q is not a name, got %+v", c.text, c.absent, ents)
			}
		}
	}
}
