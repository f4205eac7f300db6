package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/eval"
)

// FuzzLoad feeds arbitrary bytes to the dataset loader of `kioku eval`. It returns an
// error, or a dataset the evaluation can run: at least one scope, distinct non-empty guild
// ids, distinct non-empty memory ids in each scope, and queries whose relevant memories
// exist in their scope. Content the write path refuses is allowed: the run skips and counts
// it (SPEC §8).
func FuzzLoad(f *testing.F) {
	const valid = `{"name":"tiny","scopes":[{"guild_id":"g1","memories":[` +
		`{"id":"tea","content":"Mika drinks green tea every morning","author":"Mika","created_at":"2024-03-01T12:00:00Z"},` +
		`{"id":"bike","content":"Ren rides a red bicycle to work","author":"Ren"}],` +
		`"queries":[{"id":"q1","text":"what does mika drink","relevant":["tea"],"category":"single-hop"}]}]}`
	for _, s := range []string{
		valid,
		strings.Replace(valid, `"relevant":["tea"]`, `"relevant":["m9"]`, 1),
		strings.Replace(valid, `"relevant":["tea"]`, `"relevant":[]`, 1),
		strings.Replace(valid, `"id":"bike"`, `"id":"tea"`, 1),
		strings.Replace(valid, `"guild_id":"g1"`, `"guild_id":""`, 1),
		strings.Replace(valid, `"created_at":"2024-03-01T12:00:00Z"`, `"created_at":"yesterday"`, 1),
		`{"name":"x","scopes":[]}`, `{"scopes":[{"guild_id":"a"},{"guild_id":"a"}]}`, `{"scopes":[null]}`,
		"", "{", "null", "[]", `{"name":`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"dev-en.json", "dev-ja.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "eval", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	path := filepath.Join(f.TempDir(), "dataset.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := eval.Load(path)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("Load refused the dataset without saying why")
			}
			return
		}
		if len(d.Scopes) == 0 {
			t.Fatal("Load accepted a dataset without scopes")
		}
		guilds := map[string]bool{}
		for _, sc := range d.Scopes {
			if sc.GuildID == "" || guilds[sc.GuildID] {
				t.Fatalf("Load accepted guild id %q, empty or repeated", sc.GuildID)
			}
			guilds[sc.GuildID] = true
			ids := map[string]bool{}
			for _, m := range sc.Memories {
				if m.ID == "" || ids[m.ID] {
					t.Fatalf("Load accepted memory id %q in scope %q, empty or repeated", m.ID, sc.GuildID)
				}
				ids[m.ID] = true
			}
			for _, q := range sc.Queries {
				if len(q.Relevant) == 0 {
					t.Fatalf("Load accepted query %q with no relevant memory", q.ID)
				}
				for _, r := range q.Relevant {
					if !ids[r] {
						t.Fatalf("Load accepted query %q naming unknown memory %q", q.ID, r)
					}
				}
			}
		}
	})
}
