package ltm_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
)

// rawDB opens a second connection to the store's database, for rows no API writes yet
// (evidence, channel records, embeddings) and for checking what is left on disk.
func rawDB(t *testing.T, s *ltm.Store) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// addEvidence records that memory id was learned from the given messages of user.
func addEvidence(t *testing.T, db *sql.DB, id int64, user string, messages ...string) {
	t.Helper()
	for _, m := range messages {
		mustExec(t, db, `INSERT INTO memory_evidence (memory_id, message_id, user_id) VALUES (?, ?, ?)`, id, m, user)
	}
}

func mustTurn(t *testing.T, s *ltm.Store, turn memory.Turn) int64 {
	t.Helper()
	if turn.Role == "" {
		turn.Role = memory.RoleUser
	}
	id, err := s.Transcripts.AppendTurn(ctx, turn)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func withSource(m memory.Memory, src memory.Source) memory.Memory {
	m.Source = src
	return m
}

// live reports whether memory id of owner is live, failing on other errors.
func live(t *testing.T, s *ltm.Store, owner memory.Owner, id int64) bool {
	t.Helper()
	_, err := s.Memories.Get(ctx, owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// channelCheckpointPayload is an extraction job payload holding model results of a channel.
func channelCheckpointPayload(guild, channel string) map[string]any {
	return map[string]any{"guild_id": guild, "channel_id": channel,
		"checkpoint": map[string]any{"from": 0, "through": 9, "extraction": map[string]any{"facts": []any{"Alice's locker code is 4412"}}}}
}

func TestDeleteMessages(t *testing.T) {
	s, _ := jobStore(t)
	db := rawDB(t, s)

	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Content: "my locker code is 4412", MessageID: "m1"})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Role: memory.RoleAssistant, Content: "Noted."})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "bob", Content: "mine is 7781", MessageID: "m2"})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "carol", Content: "hello", MessageID: "m3"})
	// The same id elsewhere is another channel's business.
	mustTurn(t, s, memory.Turn{GuildID: "g2", ChannelID: "c9", UserID: "alice", Content: "other server", MessageID: "m1"})

	onlyM1 := testkit.MustRemember(t, s, withSource(server("g1", "Alice's locker code is 4412"), memory.SourcePipeline))
	addEvidence(t, db, onlyM1.ID, "alice", "m1")
	twoMessages := testkit.MustRemember(t, s, withSource(personal("bob", "g1", "Bob's locker code is 7781"), memory.SourcePipeline))
	addEvidence(t, db, twoMessages.ID, "alice", "m1")
	addEvidence(t, db, twoMessages.ID, "bob", "m2")
	saved := testkit.MustRemember(t, s, withSource(personal("alice", "g1", "My locker code is 4412"), memory.SourceTool))
	addEvidence(t, db, saved.ID, "alice", "m1")
	noEvidence := server("g1", "Lockers are in the basement")
	noEvidence.Source, noEvidence.Provenance.MessageID = memory.SourcePipeline, "m1"
	old := testkit.MustRemember(t, s, noEvidence)

	res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m1", "m1", "", "never-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 1 {
		t.Errorf("deleted %d transcript rows, want 1", res.Turns)
	}
	if len(res.Forgotten) != 1 || res.Forgotten[0].ID != onlyM1.ID {
		t.Fatalf("forgot %+v, want only #%d", res.Forgotten, onlyM1.ID)
	}
	turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, tu := range turns {
		texts = append(texts, tu.Content)
	}
	if got := strings.Join(texts, "|"); got != "Noted.|mine is 7781|hello" {
		t.Errorf("transcript = %q, want the deleted message gone and the rest kept", got)
	}
	if n := count(t, db, `SELECT count(*) FROM transcripts WHERE guild_id = 'g2' AND message_id = 'm1'`); n != 1 {
		t.Errorf("another channel's message with the same id was deleted")
	}

	// The pipeline memory learned only from m1 is soft-deleted through the versioned path.
	if live(t, s, onlyM1.Owner(), onlyM1.ID) {
		t.Error("the pipeline memory learned only from the deleted message is still live")
	}
	hist, err := s.Memories.History(ctx, onlyM1.Owner(), onlyM1.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	if last.Action != memory.ActionDelete || last.Reason != ltm.ReasonSourceDeleted || last.Actor != memory.ActorDiscord ||
		last.Version != 2 || last.OldContent != onlyM1.Content {
		t.Errorf("last history row = %+v, want a versioned delete for %q", last, ltm.ReasonSourceDeleted)
	}
	// Still recoverable like any forgotten memory.
	if _, n, _ := s.Memories.List(ctx, onlyM1.Owner(), memory.ListOptions{Deleted: true}); n != 1 {
		t.Errorf("%d forgotten server memories, want the soft-deleted one", n)
	}
	// Evidence left elsewhere, a deliberate save and a memory without evidence stay.
	for _, m := range []*memory.Memory{twoMessages, saved, old} {
		if !live(t, s, m.Owner(), m.ID) {
			t.Errorf("#%d %q (source %s) was forgotten", m.ID, m.Content, m.Source)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM memory_evidence WHERE memory_id = ?`, saved.ID); n != 1 {
		t.Errorf("the deliberate save has %d evidence rows, want its row kept for forget-me", n)
	}

	// The last message of the two-message memory goes too: now every message it came from
	// is deleted.
	res, err = s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Forgotten) != 1 || res.Forgotten[0].ID != twoMessages.ID {
		t.Errorf("second delete forgot %+v, want #%d", res.Forgotten, twoMessages.ID)
	}
	if live(t, s, twoMessages.Owner(), twoMessages.ID) {
		t.Error("the memory whose every message is deleted is still live")
	}

	// Deleting a message kioku never stored changes nothing.
	res, err = s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m404"})
	if err != nil || res.Turns != 0 || len(res.Forgotten) != 0 {
		t.Errorf("unknown message: %+v %v", res, err)
	}
}

func TestDeleteMessagesBulk(t *testing.T) {
	s, _ := jobStore(t)
	db := rawDB(t, s)
	var ids []string
	for i := range 120 {
		id := "b" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		ids = append(ids, id)
		mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "spammer", Content: "spam " + id, MessageID: id})
	}
	fact := testkit.MustRemember(t, s, withSource(server("g1", "Spam links were posted"), memory.SourcePipeline))
	addEvidence(t, db, fact.ID, "spammer", ids[3], ids[90])
	res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", ids[:100])
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 100 || len(res.Forgotten) != 1 {
		t.Errorf("bulk delete: %d turns, %d memories forgotten; want 100 and 1", res.Turns, len(res.Forgotten))
	}
	if n := count(t, db, `SELECT count(*) FROM transcripts`); n != 20 {
		t.Errorf("%d transcript rows left, want 20", n)
	}
}

func TestDeleteMessagesRewindsExtraction(t *testing.T) {
	s, _ := jobStore(t)
	db := rawDB(t, s)
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Content: "my locker code is 4412", MessageID: "m1"})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c2", UserID: "alice", Content: "my locker code is 4412", MessageID: "m2"})
	mustTurn(t, s, memory.Turn{ChannelID: "dm1", UserID: "alice", Content: "my locker code is 4412", MessageID: "m3"})

	enqueue := func(guild, channel string) int64 {
		id, _, err := s.Jobs.Enqueue(ctx, "extract", guild+"/"+channel, channelCheckpointPayload(guild, channel), memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	queued := enqueue("g1", "c1")
	other := enqueue("g1", "c2")
	// The DM channel's job is running: it may have read the message already.
	running := enqueue("", "dm1")
	mustExec(t, db, `UPDATE memory_jobs SET run_after = run_after + 60000 WHERE id <> ?`, running)
	job := mustLease(t, s, "worker-1")
	if job.ID != running {
		t.Fatalf("leased job %d, want %d", job.ID, running)
	}
	mustExec(t, db, `UPDATE memory_jobs SET run_after = run_after - 60000 WHERE id <> ?`, running)

	res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c1", []string{"m1"})
	if err != nil || res.Jobs != 1 {
		t.Fatalf("delete: %+v %v, want one job rewound", res, err)
	}
	hasCheckpoint := func(id int64) bool {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(mustJob(t, s, id).Payload, &p); err != nil {
			t.Fatal(err)
		}
		_, ok := p["checkpoint"]
		return ok
	}
	if hasCheckpoint(queued) {
		t.Error("the channel's queued job kept its checkpoint of the deleted message")
	}
	if j := mustJob(t, s, queued); j.State != memory.JobQueued {
		t.Errorf("queued job is %s", j.State)
	}
	if !hasCheckpoint(other) {
		t.Error("another channel's checkpoint was cleared")
	}

	res, err = s.Transcripts.DeleteMessages(ctx, "", "dm1", []string{"m3"})
	if err != nil || res.Jobs != 1 {
		t.Fatalf("DM delete: %+v %v, want the running job rewound", res, err)
	}
	if j := mustJob(t, s, running); j.State != memory.JobQueued || j.LeaseOwner != "" || hasCheckpoint(running) {
		t.Errorf("running job after the delete: %+v, want it queued again without a checkpoint", j)
	}
	// Its worker can no longer commit what it extracted from the deleted message.
	if err := s.Jobs.Complete(ctx, running, "worker-1"); !errors.Is(err, memory.ErrLeaseLost) {
		t.Errorf("the old worker's commit: %v, want ErrLeaseLost", err)
	}

	// Turns the cursor has passed were extracted already: no pending job holds them.
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c2", UserID: "alice", Content: "later", MessageID: "m4"})
	mustExec(t, db, `INSERT INTO pipeline_cursors (guild_id, channel_id, last_turn_id, updated_at) VALUES ('g1', 'c2', 2, 0)`)
	if res, err := s.Transcripts.DeleteMessages(ctx, "g1", "c2", []string{"m2"}); err != nil || res.Turns != 1 || res.Jobs != 0 {
		t.Errorf("delete of an extracted turn: %+v %v, want the row gone and no job touched", res, err)
	}
	if !hasCheckpoint(other) {
		t.Error("a checkpoint past the deleted turn was cleared")
	}
}

func TestEditMessage(t *testing.T) {
	s, _ := jobStore(t)
	db := rawDB(t, s)
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Content: "meet at 5", MessageID: "m1"})
	mustTurn(t, s, memory.Turn{GuildID: "g1", ChannelID: "c1", UserID: "alice", Role: memory.RoleAssistant, Content: "See you at 5."})
	mustTurn(t, s, memory.Turn{GuildID: "g2", ChannelID: "c1", UserID: "alice", Content: "meet at 5", MessageID: "m1"})
	fact := testkit.MustRemember(t, s, withSource(server("g1", "The meeting is at 5"), memory.SourcePipeline))
	addEvidence(t, db, fact.ID, "alice", "m1")
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "g1/c1", channelCheckpointPayload("g1", "c1"), memory.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}

	token := "ghp_" + strings.Repeat("a1B2", 9)
	res, err := s.Transcripts.EditMessage(ctx, "g1", "c1", "m1", "meet at 6, the repo token is "+token)
	if err != nil || res.Turns != 1 || res.Jobs != 1 {
		t.Fatalf("edit: %+v %v, want one row and one job", res, err)
	}
	turns, err := s.Transcripts.RecentTurns(ctx, "g1", "c1", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := turns[0].Content
	if !strings.HasPrefix(got, "meet at 6") || strings.Contains(got, token) || !strings.Contains(got, "redacted") {
		t.Errorf("edited turn = %q, want the new words with the token redacted", got)
	}
	if turns[1].Content != "See you at 5." {
		t.Errorf("the bot's reply became %q", turns[1].Content)
	}
	if n := count(t, db, `SELECT count(*) FROM transcripts WHERE guild_id = 'g2' AND content = 'meet at 5'`); n != 1 {
		t.Error("another channel's message with the same id was edited")
	}
	// What was learned stays: an edit is not a retraction.
	if !live(t, s, fact.Owner(), fact.ID) {
		t.Error("an edit forgot the memory learned from the old words")
	}
	if res, err := s.Transcripts.EditMessage(ctx, "g1", "c1", "m404", "x"); err != nil || res.Turns != 0 {
		t.Errorf("edit of an unknown message: %+v %v", res, err)
	}
}
