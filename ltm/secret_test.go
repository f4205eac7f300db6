package ltm_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// A made-up credential.
const fakePassword = "hunter2hunter2"

// TestHistoryNeverKeepsACredential: a pipeline proposal refused because its content is a
// credential is recorded in history with the credential redacted, whichever way it is
// recorded.
func TestHistoryNeverKeepsACredential(t *testing.T) {
	s := testkit.MustOpenStore(t)
	g := memory.ServerOwner("g1")
	target := testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Staging runs on the old cluster"})
	secret := "Staging uses DB_PASSWORD=" + fakePassword
	out := mustApply(t, s, memory.PipelineBatch{GuildID: "g1", ChannelID: "c1", CursorTo: 1, Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: secret}, Reason: "new fact"},
		{Action: memory.ProposeUpdate, Owner: g, TargetID: target.ID, Memory: memory.Memory{Content: secret}, Reason: "newer",
			MayEditServer: true}, // an editor spoke: the refusal below is the credential's alone
		{Action: memory.ProposeAdd, Owner: g, Memory: memory.Memory{Content: secret}, Record: memory.ActionShadow,
			Reason: "shadow of " + secret, Metadata: map[string]any{"fact": secret}},
	}})
	for i, o := range out {
		if o.Action != memory.ActionSkip && o.Action != memory.ActionShadow {
			t.Errorf("proposal %d: %s, want it skipped or shadowed", i, o.Action)
		}
	}
	evs := scopeHistory(t, s, g)
	seen := 0
	for _, ev := range evs {
		row := ev.OldContent + "|" + ev.NewContent + "|" + ev.Reason + "|" + string(ev.Metadata)
		if strings.Contains(row, fakePassword) {
			t.Errorf("history row %d holds the password: %s", ev.ID, row)
		}
		if strings.Contains(ev.NewContent, "DB_PASSWORD=[redacted password]") {
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("%d history rows keep the redacted words, want 3: %+v", seen, evs)
	}
}

// TestTranscriptReadsRedactOldRows: a transcript row stored before the detector knew a
// credential's shape reaches no reader (the chat prompt's history, the pipeline) with it.
func TestTranscriptReadsRedactOldRows(t *testing.T) {
	s := testkit.MustOpenStore(t)
	ctx := t.Context()
	db, err := sql.Open("sqlite", "file:"+s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Written around AppendTurn, as an older version would have left it.
	if _, err := db.ExecContext(ctx, `INSERT INTO transcripts (guild_id, channel_id, user_id, author_name, role, content,
		message_id, created_at) VALUES ('g1', 'c1', 'u1', 'Aiko', 'user', ?, 'm1', 1)`,
		"our DB_PASSWORD="+fakePassword+" and -----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEbody\n-----END RSA PRIVATE KEY-----"); err != nil {
		t.Fatal(err)
	}
	recent, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "u1", 10)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Transcripts.TurnsAfter(ctx, "g1", "c1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, turns := range [][]memory.Turn{recent, after} {
		if len(turns) != 1 {
			t.Fatalf("turns = %+v", turns)
		}
		if c := turns[0].Content; strings.Contains(c, fakePassword) || strings.Contains(c, "MIIEFAKEbody") ||
			c != "our DB_PASSWORD=[redacted password] and [redacted private key]" {
			t.Errorf("turn content = %q", c)
		}
	}
}
