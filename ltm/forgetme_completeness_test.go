package ltm_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// TestForgetMeCompleteness proves that forget-me leaves none of a member's words anywhere
// in the database files: each place that can hold them gets a unique word, and after
// forget-me and a WAL checkpoint no such word is in the raw bytes of any file, nor in the
// vocabulary of either full-text index (the word index stores terms, so a byte scan alone
// could miss a prefix-compressed term). Another member's data, and the server knowledge
// the member authored, survive. Every storage change must keep this test green.
func TestForgetMeCompleteness(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "kioku.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Every vector fetched for a new memory waits to be stored until the check below, and
	// every memory a single write makes waits for the full-text indexes unless flushed.
	s.VectorWriteDelay = time.Hour
	s.IndexWriteDelay = time.Hour
	indexed := func() {
		t.Helper()
		if err := s.Memories.FlushIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var embedCalls atomic.Int32
	s.Recall.SetEmbedder(func(_ context.Context, texts []string) ([][]float32, error) {
		embedCalls.Add(1)
		out := make([][]float32, len(texts))
		for i, text := range texts {
			out[i] = fakeopenai.EmbedText(text, 64)
		}
		return out, nil
	}, "fake-embed")
	// A raw connection for what the store's API does not write yet (evidence rows) and
	// for reading the full-text vocabularies.
	raw, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)

	const (
		alice, bob = "100000000000000001", "200000000000000002"
		guild      = "300000000000000003"
	)
	aliceMe, bobMe, server := memory.PersonalOwner(alice), memory.PersonalOwner(bob), memory.ServerOwner(guild)
	// One unique word per place that can hold Alice's words. They start with different
	// letters so no two share a prefix in the word index; they end in digits, which the
	// porter stemmer leaves alone, so each is its own term.
	secret := map[string]string{
		"personal":         "quokkazebra7731",
		"personal-deleted": "vermilionyak4402",
		"edited-away":      "xylophoneibis5518",
		"edited-to":        "jacarandaemu6093",
		"server-about":     "hummingbirdokapi2284",
		"remember-this":    "kestrelnarwhal3317",
		"pipeline-own":     "lemurfalcon8846",
		"pipeline-server":  "mongoosetapir1175",
		"pipeline-shadow":  "ocelotpuffin9962",
		"pipeline-update":  "anteaterbrolga4093",
		"author-name":      "rhinocerosgecko4480",
		"turn":             "sealionwalrus7204",
		"reply":            "tortoiseunicorn3391",
		"queued-job":       "platypusiguana6627",
		"leased-job":       "gazelleflamingo8437",
		"done-job":         "wolverineaxolotl5150",
		"dead-job":         "yellowjacketbison2046",
		"query":            "nightingaledingo7319",
		// Saves a near-duplicate answer holds: hers, and Bob's Remember-this of her message.
		"held-own":  "ibexmarmot5831",
		"held-copy": "puffadderkiwi2947",
		// The knowledge graph: her person entity and its aliases (her display name), a
		// relation from her, a relation learned only from her words, and an entity only her
		// personal memory mentions.
		"graph-entity":   "zephyrquasar6612",
		"graph-relation": "brambleowlet3390",
		"graph-said":     "cinnabarlynx4471",
		"graph-personal": "dandelionfox2208",
		// The hash of her web dashboard session's token, and its CSRF secret.
		"web-session": "5e55a1ce7a0be6a11ce0f0a11ce5e55",
		"web-csrf":    "c5rfa1ce7a0be6a11ce0f0a11cec5rf",
	}
	survivor := map[string]string{
		"bob-personal":      "wombatcapybara1234",
		"bob-turn":          "survivorpelican5678",
		"bob-server":        "survivorheron9012",
		"alice-authored":    "survivorbadger3456",
		"shared-evidence":   "survivorcheetah7788",
		"bob-server-author": "survivorbobname4321",
		"bob-graph":         "survivorgraph9090",
		"bob-held":          "survivorheldstork6161",
		"bob-web-session":   "b0bb5e55b0bb5e55b0bb5e55b0bb5e55",
	}
	remember := func(m memory.Memory, actor memory.Actor) *memory.Memory {
		t.Helper()
		res, err := s.Memories.Remember(ctx, m, actor)
		if err != nil || !res.Created {
			t.Fatalf("remember %q: %v", m.Content, err)
		}
		return res.Memory
	}
	evidence := func(memoryID int64, messageID, userID string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, `INSERT INTO memory_evidence (memory_id, message_id, user_id) VALUES (?, ?, ?)`,
			memoryID, messageID, userID); err != nil {
			t.Fatal(err)
		}
	}
	aliceSays := memory.Provenance{AuthorID: alice, Author: "Alice " + secret["author-name"], ChannelID: "c1", MessageID: "m1"}

	// Alice's personal memories: live, forgotten, and edited (history keeps both texts).
	remember(memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "My word is " + secret["personal"],
		Provenance: aliceSays}, memory.UserActor(alice))
	gone := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "I once said " + secret["personal-deleted"]},
		memory.UserActor(alice))
	indexed() // forgotten and edited after they are in the full-text indexes; the rest waits
	if _, err := s.Memories.Forget(ctx, aliceMe, []int64{gone.ID}, memory.UserActor(alice), ""); err != nil {
		t.Fatal(err)
	}
	edited := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "I like " + secret["edited-away"]},
		memory.ModelActor(alice))
	indexed()
	to := "I like " + secret["edited-to"]
	if _, err := s.Memories.Modify(ctx, aliceMe, edited.ID, memory.Change{Content: &to}, memory.UserActor(alice)); err != nil {
		t.Fatal(err)
	}
	// A server fact about Alice, and Bob's Remember-this copy of Alice's message.
	remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, SubjectID: alice,
		Content: "Alice is called " + secret["server-about"]}, memory.UserActor(bob))
	copyOfAlice := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: bob, SubjectID: alice,
		Content: "Alice said " + secret["remember-this"], Provenance: aliceSays}, memory.UserActor(bob))
	evidence(copyOfAlice.ID, "m-alice-1", alice)
	// Server knowledge Alice added: it stays, without her name; she also edited it.
	authored := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
		Content: "The wiki lives at " + survivor["alice-authored"], Provenance: aliceSays}, memory.UserActor(alice))
	pin := true
	if _, err := s.Memories.Modify(ctx, server, authored.ID, memory.Change{Pinned: &pin}, memory.UserActor(alice)); err != nil {
		t.Fatal(err)
	}
	// A memory learned from Alice's and Bob's messages together stays.
	shared := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild,
		Content: "The team agreed on " + survivor["shared-evidence"]}, memory.ActorPipeline)
	evidence(shared.ID, "m-alice-2", alice)
	evidence(shared.ID, "m-bob-2", bob)
	// Pipeline writes: Alice's own fact, a server fact learned only from her message, and
	// a proposal about her recorded in shadow mode.
	outcomes, err := s.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: guild, ChannelID: "c1", Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: aliceMe, Memory: memory.Memory{Content: "Alice keeps " + secret["pipeline-own"]}},
		{Action: memory.ProposeAdd, Owner: server, Memory: memory.Memory{Content: "The release is named " + secret["pipeline-server"]}},
		{Action: memory.ProposeAdd, Owner: server, Record: memory.ActionShadow,
			Memory: memory.Memory{SubjectID: alice, Content: "Alice dislikes " + secret["pipeline-shadow"]}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	evidence(outcomes[1].MemoryID, "m-alice-3", alice)
	// A server fact learned from Bob's message, which the pipeline then rewrote from hers.
	fromBob, err := s.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: guild, ChannelID: "c1", Proposals: []memory.Proposal{
		{Action: memory.ProposeAdd, Owner: server, Memory: memory.Memory{Content: "The picnic is in the park"},
			Evidence: []memory.MessageRef{{MessageID: "m-bob-3", AuthorID: bob}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rewrite, err := s.Facts.ApplyPipelineBatch(ctx, memory.PipelineBatch{GuildID: guild, ChannelID: "c1", Proposals: []memory.Proposal{
		{Action: memory.ProposeUpdate, Owner: server, TargetID: fromBob[0].MemoryID, MayEditServer: true,
			Memory:   memory.Memory{Content: "The picnic is in the park by " + secret["pipeline-update"]},
			Evidence: []memory.MessageRef{{MessageID: "m-alice-4", AuthorID: alice}}},
	}})
	if err != nil || rewrite[0].Action != memory.ActionUpdate {
		t.Fatalf("pipeline update: %+v %v", rewrite, err)
	}
	// Transcripts: Alice's message and the bot's reply to her.
	for _, turn := range []memory.Turn{
		{GuildID: guild, ChannelID: "c1", UserID: alice, AuthorName: "Alice", Role: memory.RoleUser, Content: "hi " + secret["turn"]},
		{GuildID: guild, ChannelID: "c1", UserID: alice, Role: memory.RoleAssistant, Content: "hello " + secret["reply"]},
		{GuildID: guild, ChannelID: "c1", UserID: bob, AuthorName: "Bob", Role: memory.RoleUser, Content: "hey " + survivor["bob-turn"]},
	} {
		if _, err := s.Transcripts.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs whose checkpoints hold Alice's words: finished, dead, queued and running.
	checkpoint := func(word string) map[string]any {
		return map[string]any{"guild_id": guild, "channel_id": "c1",
			"checkpoint": map[string]any{"extraction": map[string]any{"facts": []string{"Alice likes " + word}}}}
	}
	runJob := func(key, word string) *memory.Job {
		t.Helper()
		if _, _, err := s.Jobs.Enqueue(ctx, "extract", key, checkpoint(word), memory.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		j, err := s.Jobs.Lease(ctx, "worker-"+key, []string{"extract"}, time.Minute)
		if err != nil || j == nil {
			t.Fatalf("lease: %v", err)
		}
		if err := s.Jobs.Heartbeat(ctx, j.ID, j.LeaseOwner, time.Minute, checkpoint(word)); err != nil {
			t.Fatal(err)
		}
		return j
	}
	done := runJob("g/done", secret["done-job"])
	if err := s.Jobs.Complete(ctx, done.ID, done.LeaseOwner); err != nil {
		t.Fatal(err)
	}
	dead := runJob("g/dead", secret["dead-job"])
	current, err := s.Jobs.GetJob(ctx, dead.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Jobs.Bury(ctx, dead.ID, dead.LeaseOwner, fmt.Errorf("bad job payload: %s", current.Payload)); err != nil {
		t.Fatal(err)
	}
	running := runJob("g/running", secret["leased-job"])
	if _, _, err := s.Jobs.Enqueue(ctx, "extract", "g/queued", checkpoint(secret["queued-job"]), memory.EnqueueOptions{
		RunAfter: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// Saves waiting for a near-duplicate answer's choice: Alice's own, and Bob's copy of
	// her message; Bob's own held save stays.
	for _, held := range []struct {
		m     memory.Memory
		actor memory.Actor
	}{
		{memory.Memory{Scope: memory.ScopePersonal, UserID: alice, GuildID: guild, Content: "I like " + secret["held-own"]}, memory.UserActor(alice)},
		{memory.Memory{Scope: memory.ScopeServer, GuildID: guild, SubjectID: alice, Content: "Alice said " + secret["held-copy"],
			Provenance: aliceSays}, memory.UserActor(bob)},
		{memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "Bob holds " + survivor["bob-held"]}, memory.UserActor(bob)},
	} {
		if _, _, err := s.Confirmations.HoldWrite(ctx, memory.HeldWrite{Memory: held.m}, held.actor); err != nil {
			t.Fatal(err)
		}
	}
	// Bob's data, which must survive untouched.
	bobOwn := remember(memory.Memory{Scope: memory.ScopePersonal, UserID: bob, Content: "Bob's word is " + survivor["bob-personal"]},
		memory.UserActor(bob))
	bobServer := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "Bob set up " + survivor["bob-server"],
		Provenance: memory.Provenance{AuthorID: bob, Author: "Bob " + survivor["bob-server-author"]}}, memory.UserActor(bob))
	// Signed in to the web dashboard: Alice in two browsers, Bob in one.
	for token, user := range map[string]string{secret["web-session"]: alice, "a11ce5ec0d5e55": alice, survivor["bob-web-session"]: bob} {
		csrf := secret["web-csrf"]
		if user == bob {
			csrf = "b0bc5rf"
		}
		if _, err := s.Sessions.Create(ctx, memory.WebSession{TokenHash: token, UserID: user, GuildIDs: []string{guild},
			CSRF: csrf}, 7*24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// The knowledge graph: Alice's personal memory links an entity of her personal graph;
	// the guild's graph has her person entity (by her display name and a mention in Bob's
	// memory, which stays), a relation from her, one learned only from her, and Bob's own.
	remember(memory.Memory{Scope: memory.ScopePersonal, UserID: alice, Content: "My cat is called Dandelionfox2208"},
		memory.UserActor(alice))
	mentionsAlice := remember(memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: "Ask <@" + alice + "> about the wiki",
		Provenance: memory.Provenance{AuthorID: bob, Author: "Bob"}}, memory.UserActor(bob))
	people := []graph.Person{{UserID: alice, Name: "Alice Zephyrquasar6612"}, {UserID: bob, Name: "Bob"}}
	for _, b := range []graph.Batch{
		{Owner: server, People: people, Sources: []string{alice}, Triples: []graph.Triple{
			{Source: "Alice Zephyrquasar6612", Relationship: "mentors " + secret["graph-relation"], Target: "Bob", Confidence: 0.9},
			{Source: "Cinnabarlynx4471 Guild", Relationship: "hosts", Target: "the bake sale", Confidence: 0.9}}},
		{Owner: server, People: people, Sources: []string{bob}, Triples: []graph.Triple{
			{Source: "Bob", Relationship: "plays", Target: "Survivorgraph9090", Confidence: 0.9}}},
	} {
		if n, err := s.Graph.AddTriples(ctx, b); err != nil || n != len(b.Triples) {
			t.Fatalf("graph triples: %d %v", n, err)
		}
	}
	// A search puts Alice's query text in the query-vector cache.
	if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "what is " + secret["query"], Owners: []memory.Owner{aliceMe}}); err != nil {
		t.Fatal(err)
	}
	// Searches of every scope load the in-memory keyword indexes with Alice's words.
	for _, o := range []memory.Owner{aliceMe, bobMe, server} {
		if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "word", Owners: []memory.Owner{o}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, place := range []string{"personal", "server-about", "author-name", "remember-this"} {
		if !s.Recall.KeywordIndexHolds(secret[place]) {
			t.Fatalf("%s: the keyword index never held %q, so its check below proves nothing", place, secret[place])
		}
	}

	// The word company counts each memory's words: the byte scan below proves her words
	// left it, once it is certain they were in it.
	if err := s.Maintenance.FlushWordCompany(ctx); err != nil {
		t.Fatal(err)
	}
	inCompany := func(word string) bool {
		t.Helper()
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM comentions WHERE term = ?1 OR partner = ?1`, word).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	for _, place := range []string{"personal", "server-about", "edited-to", "remember-this"} {
		if !inCompany(secret[place]) {
			t.Fatalf("%s: the word company never held %q, so the check below proves nothing", place, secret[place])
		}
	}

	personalWords := "My word is " + secret["personal"]
	if !s.Recall.VectorWaiting(personalWords) {
		t.Fatal("the vector of her personal memory is not waiting to be stored, so the check below proves nothing")
	}

	preview, err := s.Confirmations.PreviewForgetMe(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Confirmations.ConfirmForgetMe(ctx, alice, preview.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, place := range []string{"bob-personal", "bob-server", "alice-authored"} {
		if !inCompany(survivor[place]) {
			t.Errorf("%s: %q left the word company, but it was not Alice's", place, survivor[place])
		}
	}
	want := memory.ForgetMeSummary{Memories: 5, About: 2, FromMessages: 2, Anonymised: 1, Turns: 2, Jobs: 2}
	for _, got := range []memory.ForgetMeSummary{preview, sum} {
		got.Token, got.ExpiresAt = "", time.Time{}
		if got != want {
			t.Errorf("forget-me counts %+v, want %+v", got, want)
		}
	}

	t.Run("VectorIndexReloadsNoneOfTheirMemories", func(t *testing.T) {
		// Evict every scope, then load Alice's personal scope again from the database.
		s.Recall.SetVectorCache(1)
		s.Recall.SetVectorCache(ltm.DefaultVectorCacheBytes)
		if err := s.Recall.WarmVectors(ctx, aliceMe); err != nil {
			t.Fatal(err)
		}
		if hits := s.Recall.NearestMemories(aliceMe, fakeopenai.EmbedText(secret["personal"], 64), 10, true); len(hits) != 0 {
			t.Fatalf("Alice's personal scope has %d vectors after forget-me and a reload", len(hits))
		}
	})
	t.Run("RunningJobCannotWriteItsCheckpointBack", func(t *testing.T) {
		err := s.Jobs.Heartbeat(ctx, running.ID, running.LeaseOwner, time.Minute, checkpoint(secret["leased-job"]))
		if !errors.Is(err, memory.ErrLeaseLost) {
			t.Fatalf("heartbeat of a job running during forget-me: %v, want ErrLeaseLost", err)
		}
	})
	t.Run("QueryCacheForgetsTheirQueries", func(t *testing.T) {
		before := embedCalls.Load()
		if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "what is " + secret["query"], Owners: []memory.Owner{bobMe}}); err != nil {
			t.Fatal(err)
		}
		if embedCalls.Load() == before {
			t.Error("the query vector of a search made before forget-me was still cached")
		}
	})

	t.Run("WaitingVectorsOfTheirWordsAreDropped", func(t *testing.T) {
		if s.Recall.VectorWaiting(personalWords) {
			t.Error("the vector of her personal memory still waits in memory to be stored")
		}
	})
	t.Run("WaitingVectorsOfTheirWordsAreNotStored", func(t *testing.T) {
		if err := s.Recall.FlushVectors(ctx); err != nil {
			t.Fatal(err)
		}
		var orphans, stored int
		if err := raw.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM embeddings WHERE content_hash NOT IN (SELECT content_hash FROM memories)),
			(SELECT count(*) FROM embeddings)`).Scan(&orphans, &stored); err != nil {
			t.Fatal(err)
		}
		if orphans != 0 {
			t.Errorf("%d vectors stored of content no memory holds", orphans)
		}
		if stored == 0 {
			t.Error("no vector was stored at all, so the check proves nothing")
		}
	})

	t.Run("WaitingMemoriesOfTheirWordsAreNotIndexed", func(t *testing.T) {
		var waiting int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE index_pending <> 0`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			t.Fatal("no memory was waiting for the full-text indexes, so the checks below prove nothing of them")
		}
		indexed() // NoTermsLeft reads the indexes with every survivor in them
	})

	t.Run("KeywordIndexForgetsTheirWords", func(t *testing.T) {
		// The next search applies the change log; no read of the index happens before it.
		if _, err := s.Recall.Search(ctx, memory.SearchQuery{Text: "word", Owners: []memory.Owner{bobMe}}); err != nil {
			t.Fatal(err)
		}
		for place, word := range secret {
			if s.Recall.KeywordIndexHolds(word) {
				t.Errorf("%s: %q is still in an in-memory keyword index", place, word)
			}
		}
		for _, place := range []string{"bob-personal", "bob-server", "alice-authored"} {
			if !s.Recall.KeywordIndexHolds(survivor[place]) {
				t.Errorf("%s: %q left the keyword index, but it was not Alice's", place, survivor[place])
			}
		}
	})

	var busy, logFrames, done2 int
	if err := raw.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done2); err != nil || busy != 0 {
		t.Fatalf("checkpoint: busy %d, %v", busy, err)
	}
	t.Run("NoBytesLeft", func(t *testing.T) {
		files, _ := filepath.Glob(path + "*")
		var all []byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
			for place, word := range secret {
				// The suffix too: the word index stores a term after the prefix it shares
				// with the previous one.
				// And capitalised: names keep the case they were written in.
				for _, needle := range []string{word, word[4:], strings.ToUpper(word[:1]) + word[1:]} {
					if bytes.Contains(b, []byte(needle)) {
						t.Errorf("%s: %q (%s) is still in the bytes of %s", place, needle, word, filepath.Base(f))
					}
				}
			}
		}
		// The scan sees what is there: survivors' words are found.
		for place, word := range survivor {
			if !bytes.Contains(all, []byte(word)) {
				t.Errorf("%s: %q is missing from the database files, so the scan proves nothing", place, word)
			}
		}
	})
	t.Run("NoTermsLeft", func(t *testing.T) {
		for _, stmt := range []string{
			`CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, 'memories_fts', 'row')`,
			`CREATE VIRTUAL TABLE temp.trigrams USING fts5vocab(main, 'memories_tri', 'row')`,
		} {
			if _, err := raw.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		terms := func(table string) map[string]bool {
			rows, err := raw.QueryContext(ctx, `SELECT term FROM temp.`+table)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			out := map[string]bool{}
			for rows.Next() {
				var term string
				if err := rows.Scan(&term); err != nil {
					t.Fatal(err)
				}
				out[term] = true
			}
			return out
		}
		words, trigrams := terms("words"), terms("trigrams")
		// Trigrams shared with text that stays (other words, common letters) may remain;
		// the ones only Alice's words had must not.
		kept := map[string]bool{}
		live, _, err := s.Memories.List(ctx, server, memory.ListOptions{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		bobs, _, err := s.Memories.List(ctx, bobMe, memory.ListOptions{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range append(live, bobs...) {
			for _, g := range trigramsOf(m.Content) {
				kept[g] = true
			}
		}
		for place, word := range secret {
			// The word index stores lowercased, stemmed terms; these words are their own stem.
			if words[word] {
				t.Errorf("%s: term %q is still in the word index", place, word)
			}
			for _, g := range trigramsOf(word) {
				if trigrams[g] && !kept[g] {
					t.Errorf("%s: trigram %q of %q is still in the trigram index", place, g, word)
				}
			}
		}
		for _, word := range []string{survivor["bob-personal"], survivor["alice-authored"], survivor["bob-server-author"]} {
			if !words[word] {
				t.Errorf("term %q of data that stays is missing from the word index, so the check proves nothing", word)
			}
		}
	})
	t.Run("OthersIntact", func(t *testing.T) {
		if m, err := s.Memories.Get(ctx, bobMe, bobOwn.ID); err != nil || m.Content != bobOwn.Content {
			t.Errorf("Bob's personal memory: %v %v", m, err)
		}
		if m, err := s.Memories.Get(ctx, server, bobServer.ID); err != nil || m.Provenance.AuthorID != bob {
			t.Errorf("Bob's server memory: %+v %v", m, err)
		}
		if m, err := s.Memories.Get(ctx, server, shared.ID); err != nil || m.Content != shared.Content {
			t.Errorf("memory learned from Alice and Bob together: %v %v", m, err)
		}
		m, err := s.Memories.Get(ctx, server, authored.ID)
		if err != nil || m.Content != authored.Content || !m.Pinned {
			t.Fatalf("server memory Alice added: %+v %v", m, err)
		}
		if m.Provenance.AuthorID != "" || m.Provenance.Author != "" || m.Provenance.MessageID != "" {
			t.Errorf("server memory Alice added still names her: %+v", m.Provenance)
		}
		hist, err := s.Memories.History(ctx, server, authored.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range hist {
			if strings.Contains(string(ev.Actor), alice) {
				t.Errorf("history of the memory Alice added still names her: %+v", ev)
			}
		}
		if n, err := s.Transcripts.CountTurns(ctx, bob); err != nil || n != 1 {
			t.Errorf("Bob's turns: %d %v", n, err)
		}
		if _, err := s.Memories.Get(ctx, bobMe, copyOfAlice.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Errorf("Bob's copy of Alice's message survived: %v", err)
		}
		for _, token := range []string{secret["web-session"], "a11ce5ec0d5e55"} {
			if _, err := s.Sessions.Lookup(ctx, token); memory.ErrorCode(err) != memory.ENOTFOUND {
				t.Errorf("Alice's web session %s after forget-me: %v, want not found", token, err)
			}
		}
		if ws, err := s.Sessions.Lookup(ctx, survivor["bob-web-session"]); err != nil || ws.UserID != bob {
			t.Errorf("Bob's web session: %+v %v", ws, err)
		}
		if ns, err := s.Graph.MemoryEntities(ctx, server, mentionsAlice.ID); err != nil || len(ns) != 0 {
			t.Errorf("Bob's memory that mentions Alice still links her entity: %+v %v", ns, err)
		}
		if nb, err := s.Graph.Neighbourhood(ctx, server, "Bob"); err != nil || len(nb.Relations) != 1 || nb.Relations[0].Type != "plays" {
			t.Errorf("Bob's own relation: %+v %v", nb, err)
		}
	})
}

func trigramsOf(s string) []string {
	r := []rune(strings.ToLower(s))
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		out = append(out, string(r[i:i+3]))
	}
	return out
}
