package eval_test

import (
	"testing"

	"github.com/kioku-bot/kioku/internal/eval"
)

// The conversational dev sets load through the loader and keep the shape they are described
// with in testdata/eval/README.md: enough messages and questions, every category well
// represented, multi-hop questions that need 2-4 messages, and an asked_at on every temporal
// question so that its relative dates mean something.
func TestConversationalDevSetsAreWellFormed(t *testing.T) {
	categories := []string{"single-hop", "multi-hop", "temporal", "open-domain"}
	cases := []struct {
		file                      string
		messages, queries, perCat int
	}{
		{"dev-conv-en", 600, 200, 40},
		{"dev-conv-ja", 150, 60, 12},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			d, err := eval.Load(repoFile(t, "testdata/eval/"+c.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			messages, queries := 0, 0
			perCat := map[string]int{}
			for _, sc := range d.Scopes {
				messages += len(sc.Memories)
				for _, m := range sc.Memories {
					if m.Author == "" || m.CreatedAt.IsZero() {
						t.Errorf("%s %s: every message has a speaker and a time", sc.GuildID, m.ID)
					}
				}
				for _, q := range sc.Queries {
					queries++
					perCat[q.Category]++
					switch q.Category {
					case "multi-hop":
						if n := len(q.Relevant); n < 2 || n > 4 {
							t.Errorf("%s: multi-hop lists %d messages, want 2-4", q.ID, n)
						}
					case "temporal":
						at, err := sc.AskedAt(q)
						if q.AskedAt == "" || err != nil || at.IsZero() {
							t.Errorf("%s: temporal question without a valid asked_at (%q, %v)", q.ID, q.AskedAt, err)
						}
					}
				}
			}
			if messages < c.messages || queries < c.queries {
				t.Errorf("%d messages and %d questions, want at least %d and %d", messages, queries, c.messages, c.queries)
			}
			for _, cat := range categories {
				if perCat[cat] < c.perCat {
					t.Errorf("%d %s questions, want at least %d", perCat[cat], cat, c.perCat)
				}
			}
			if len(perCat) != len(categories) {
				t.Errorf("categories %v, want only %v", perCat, categories)
			}
		})
	}
}
