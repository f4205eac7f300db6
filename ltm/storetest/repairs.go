package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// Repairer runs a store's one-time repairs of data older versions wrote.
type Repairer interface {
	RunRepairsWith(ctx context.Context, opt ltm.RepairOptions) (maintenance.RepairReport, error)
}

// legacyToken is a fake Hugging Face token: the first credential rules did not know its
// shape, so older versions stored it as it was.
const legacyToken = "hf_FAKEfakeFAKEfake0123456789abcdefgh"

// testSecretTags: a tag is checked for credentials as content is, on create and on edit.
func testSecretTags(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	m := server("g1", "The deploy key lives in the vault")
	m.Tags = []string{"ops", "password=hunter22"}
	_, err := s.Memories.Remember(t.Context(), m, "test")
	wantCode(t, err, memory.EINVALID)
	kept := mustRemember(t, s, server("g1", "The deploy key lives in the vault"))
	tags := []string{"AKIAIOSFODNN7EXAMPLE"}
	_, err = s.Memories.Modify(t.Context(), memory.ServerOwner("g1"), kept.ID, memory.Change{Tags: &tags}, "test")
	wantCode(t, err, memory.EINVALID)
}

// testSecretRescan: a store whose data was scanned with older credential rules re-scans
// it: a memory's content and tag, a history row, a transcript and a job payload holding a
// credential the old rules missed are redacted, the memory through an audited change that
// does not quote it. The re-scan resumes where an interrupted one stopped, and a finished
// one does nothing.
func testSecretRescan(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	if s.Repairs == nil || s.Exec == nil {
		t.Skip("the store has no repairs")
	}
	ctx := t.Context()
	if _, err := s.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	exec := func(stmt string) {
		t.Helper()
		if err := s.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	owner := memory.ServerOwner("g1")
	leaked := mustRemember(t, s, server("g1", "The model mirror needs a token"))
	clean := mustRemember(t, s, server("g1", "Raid night is Friday"))
	turn := mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "u1", Content: "use the mirror"})
	job, _, err := s.Jobs.Enqueue(ctx, "extract", "g1/c1", map[string]string{"guild_id": "g1"}, memory.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What an older version stored: the write paths redacted with the rules of the day.
	exec(`UPDATE memories SET content = 'The model mirror needs ` + legacyToken + `', tags = '["ci","` +
		strings.ToLower(legacyToken) + `"]' WHERE id = ` + itoa(leaked.ID))
	exec(`UPDATE memory_history SET new_content = 'The model mirror needs ` + legacyToken + `' WHERE memory_id = ` + itoa(leaked.ID))
	exec(`UPDATE transcripts SET content = 'use the mirror with ` + legacyToken + `' WHERE id = ` + itoa(turn))
	exec(`UPDATE memory_jobs SET payload = '{"guild_id":"g1","note":"` + legacyToken + `"}' WHERE id = ` + itoa(job))
	exec(`UPDATE store_repairs SET rules = 1 WHERE name = '` + ltm.RepairRedactSecrets + `'`)

	// Interrupted after its first batch of one row.
	stopped, cancel := context.WithCancel(ctx)
	var stoppedAt int64
	_, err = s.Repairs.RunRepairsWith(stopped, ltm.RepairOptions{Batch: 1, AfterBatch: func(_ string, cursor int64) {
		stoppedAt = cursor
		cancel()
	}})
	if err == nil {
		t.Fatal("an interrupted re-scan reported no error")
	}
	if j, err := s.Jobs.GetJob(ctx, job); err != nil || !strings.Contains(string(j.Payload), legacyToken) {
		t.Fatalf("the re-scan reached the jobs in its first batch (err %v)", err)
	}
	first := int64(-1)
	rep, err := s.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{Batch: 1, AfterBatch: func(_ string, cursor int64) {
		if first < 0 {
			first = cursor
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first <= stoppedAt {
		t.Errorf("the resumed re-scan's first batch ended at %d, not after the saved cursor %d: it restarted", first, stoppedAt)
	}
	if rep.Memories != 0 || rep.History != 1 || rep.Transcripts != 1 || rep.Jobs != 1 {
		t.Errorf("resumed re-scan report %+v, want the history row, the transcript and the job (the memory came first)", rep)
	}

	got, err := s.Memories.Get(ctx, owner, leaked.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Content, "FAKEfake") || !strings.Contains(got.Content, "[redacted Hugging Face token]") ||
		strings.Join(got.Tags, ",") != "ci" || got.Version != leaked.Version+1 {
		t.Errorf("redacted memory %q tags %v version %d", got.Content, got.Tags, got.Version)
	}
	if c, _ := s.Memories.Get(ctx, owner, clean.ID); c == nil || c.Version != clean.Version {
		t.Errorf("a memory without a credential was changed: %+v", c)
	}
	hist, err := s.Memories.History(ctx, owner, leaked.ID)
	if err != nil {
		t.Fatal(err)
	}
	var audited bool
	for _, ev := range hist {
		all := ev.OldContent + ev.NewContent + ev.Reason + string(ev.Metadata)
		if strings.Contains(strings.ToLower(all), "fakefake") {
			t.Errorf("history event %d still quotes the credential: %q", ev.ID, all)
		}
		audited = audited || (ev.Actor == "upgrade" && ev.Version == got.Version && strings.Contains(ev.Reason, "redacted"))
	}
	if !audited {
		t.Errorf("no history event records the redaction: %+v", hist)
	}
	turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "u1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || strings.Contains(turns[0].Content, "FAKEfake") {
		t.Errorf("transcript after the re-scan: %q", turnTexts(turns))
	}
	if j, err := s.Jobs.GetJob(ctx, job); err != nil || strings.Contains(string(j.Payload), "FAKEfake") ||
		!strings.Contains(string(j.Payload), `"guild_id":"g1"`) {
		t.Errorf("job payload after the re-scan: %s (err %v)", j.Payload, err)
	}
	if rep, err := s.Repairs.RunRepairsWith(ctx, ltm.RepairOptions{}); err != nil || !rep.Empty() {
		t.Errorf("a finished re-scan ran again: %+v (err %v)", rep, err)
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
