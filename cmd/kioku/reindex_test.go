package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestForeignClient: another SQLite client, a small program using only database/sql and the
// driver (testdata/foreignclient, importing nothing of kioku's), reads a database kioku made and
// inserts memories into it. The in-memory keyword index computes every memory's search text
// itself, so recall finds such a memory at once; the full-text index, which answers while a
// large scope's in-memory index builds, indexes it as the raw text it holds until `kioku
// reindex` computes its search text, after which it too finds full-width Latin and Latin
// words inside Japanese text.
func TestForeignClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed to build the foreign client")
	}
	db := filepath.Join(t.TempDir(), "k.db")
	env := map[string]string{"KIOKU_DB": db}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runApp(t, env, "", args...)
		if code != 0 {
			t.Fatalf("kioku %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	searchIDs := func(query string) []int64 {
		t.Helper()
		var hits []struct {
			Memory struct {
				ID int64 `json:"id"`
			} `json:"memory"`
		}
		if err := json.Unmarshal([]byte(mustRun("memories", "search", query, "--guild", "g1", "--json")), &hits); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, h := range hits {
			ids = append(ids, h.Memory.ID)
		}
		return ids
	}
	mustRun("memories", "add", "--guild", "g1", "The raid is on Friday")
	mustRun("memories", "add", "--guild", "g1", "ＡＰＩの上限は毎分60回")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const vpn, backups = "ＶＰＮの設定はwikiにある", "Backups run nightly at three"
	cmd := exec.CommandContext(ctx, goTool, "run", "./testdata/foreignclient", db, "g1", vpn, backups)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the foreign client failed: %v\n%s", err, stderr.String())
	}
	var foreign struct {
		Read []struct {
			ID       int64  `json:"id"`
			ScopeKey string `json:"scope_key"`
			Content  string `json:"content"`
		} `json:"read"`
		Inserted []int64 `json:"inserted"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &foreign); err != nil {
		t.Fatalf("foreign client output %q: %v", stdout.String(), err)
	}
	if len(foreign.Read) != 2 || foreign.Read[0].Content != "The raid is on Friday" ||
		foreign.Read[1].Content != "ＡＰＩの上限は毎分60回" || foreign.Read[1].ScopeKey != "g:g1" {
		t.Errorf("the foreign client read %+v, want kioku's two memories", foreign.Read)
	}
	if len(foreign.Inserted) != 2 {
		t.Fatalf("the foreign client inserted %v, want two memories", foreign.Inserted)
	}
	vpnID, backupsID := foreign.Inserted[0], foreign.Inserted[1]

	t.Run("IndexedAsRawTextAtOnce", func(t *testing.T) {
		if got := searchIDs("backups nightly"); len(got) == 0 || got[0] != backupsID {
			t.Errorf(`"backups nightly" found %v, want #%d first`, got, backupsID)
		}
	})
	// The full-text index holds the raw text, which does not answer an English query, so
	// what follows shows reindex at work; recall (the in-memory index) answers already.
	ftsIDs := func(term string) []int64 {
		t.Helper()
		raw, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(db))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		rows, err := raw.Query(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?`, term)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	if got := ftsIDs("vpn"); len(got) != 0 {
		t.Fatalf(`the full-text index found "vpn" in %v before reindex; the test no longer shows the difference`, got)
	}
	if got := searchIDs("vpn"); len(got) == 0 || got[0] != vpnID {
		t.Errorf(`recall found "vpn" in %v before reindex, want #%d: the in-memory index computes search text itself`, got, vpnID)
	}
	t.Run("ReindexComputesSearchText", func(t *testing.T) {
		var rep struct {
			Memories   int `json:"memories"`
			SearchText int `json:"search_text"`
			Words      int `json:"words"`
			Trigrams   int `json:"trigrams"`
		}
		if err := json.Unmarshal([]byte(mustRun("reindex", "--json")), &rep); err != nil {
			t.Fatal(err)
		}
		// Both foreign rows have a full-width author; kioku's own rows already had their search
		// text. The trigram index holds the two memories with text beyond ASCII.
		if rep.Memories != 4 || rep.SearchText != 2 || rep.Words != 4 || rep.Trigrams != 2 {
			t.Errorf("reindex report %+v, want 4 memories, 2 search texts, 4 words, 2 trigrams", rep)
		}
		if got := ftsIDs("vpn"); len(got) != 1 || got[0] != vpnID {
			t.Errorf(`the full-text index found "vpn" in %v after reindex, want #%d`, got, vpnID)
		}
		for _, q := range []string{"vpn", "wiki", "vpn wiki settings"} {
			if got := searchIDs(q); len(got) == 0 || got[0] != vpnID {
				t.Errorf("%q found %v after reindex, want #%d first", q, got, vpnID)
			}
		}
		if got := searchIDs("api"); len(got) == 0 || got[0] != foreign.Read[1].ID {
			t.Errorf(`"api" found %v after reindex, want kioku's own #%d`, got, foreign.Read[1].ID)
		}
		if got := searchIDs("backups nightly"); len(got) == 0 || got[0] != backupsID {
			t.Errorf(`"backups nightly" found %v after reindex, want #%d first`, got, backupsID)
		}
	})
	t.Run("RunsAgainWithNothingToCompute", func(t *testing.T) {
		out := mustRun("reindex")
		if !strings.Contains(out, "reindexed 4 memories: search text recomputed for 0") {
			t.Errorf("second reindex: %q", out)
		}
	})
}
