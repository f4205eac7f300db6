package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// End-to-end tests of what Discord events do to stored data (SPEC §2): deleted and edited
// messages, and the bot's removal from a server, through the real `kioku run` wiring.

// openDB opens the running bot's database a second time, as the CLI would, plus a raw
// connection for rows no API writes yet (the pipeline's evidence rows).
func (h *e2e) openDB() (*ltm.Store, *sql.DB) {
	h.t.Helper()
	store, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { store.Close() })
	db, err := sql.Open("sqlite", "file:"+h.db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { db.Close() })
	return store, db
}

// turnsOf returns the transcript texts stored for a Discord message.
func turnsOf(t *testing.T, db *sql.DB, messageID string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT content FROM transcripts WHERE message_id = ?`, messageID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// stmShow is what /stm show tells user about their short-term memory.
func (h *e2e) stmShow(user *discordgo.User) string {
	h.t.Helper()
	return h.command(guildA, channelA, user, permMember, slash("stm", "show")).Text()
}

// TestRunDeletedAndEditedMessages: a deleted message leaves short-term memory and the
// transcript; the pipeline memory learned only from it is soft-deleted with the reason
// "source message deleted", while Remember this on the same message stays. A bulk delete
// does the same for a batch, and an edit replaces the stored text, redacted.
func TestRunDeletedAndEditedMessages(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	alice, bob := h.fake.NewUser("alice"), h.fake.NewUser("bob")
	me := h.fake.BotUser()
	store, db := h.openDB()

	h.ai.Script(fakeopenai.Text("Noted."))
	msg := h.fake.GuildMessage(guildA, channelA, alice, "<@"+me.ID+"> my locker code is 4412", me)
	h.chat(msg)
	mustContain(t, "/stm show before the delete", h.stmShow(alice), "my locker code is 4412")
	if got := turnsOf(t, db, msg.ID); len(got) != 1 {
		t.Fatalf("transcript holds %q for the message, want it stored", got)
	}
	// A deliberate save of the message, and what the pipeline would have learned from it.
	r := h.interact(h.fake.MessageCommand(guildA, channelA, alice, permMember, "Remember this", msg))
	saved := int64(rememberedID(t, r))
	extracted, err := store.Memories.Remember(context.Background(), memory.Memory{Scope: memory.ScopeServer, GuildID: guildA,
		Content: "Alice's locker code is 4412", Source: memory.SourcePipeline,
		Provenance: memory.Provenance{AuthorID: alice.ID, ChannelID: channelA, MessageID: msg.ID}}, memory.ActorPipeline)
	if err != nil {
		t.Fatal(err)
	}
	// Remember this links its copy to the message itself; the pipeline's link is made here.
	if _, err := db.Exec(`INSERT INTO memory_evidence (memory_id, message_id, user_id) VALUES (?, ?, ?)`,
		extracted.Memory.ID, msg.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	var links int
	if err := db.QueryRow(`SELECT count(*) FROM memory_evidence WHERE memory_id = ? AND message_id = ?`, saved, msg.ID).Scan(&links); err != nil || links != 1 {
		t.Fatalf("Remember this recorded %d evidence links to its message (%v), want 1", links, err)
	}

	if err := h.fake.DispatchMessageDelete(guildA, channelA, msg.ID); err != nil {
		t.Fatal(err)
	}
	server := memory.ServerOwner(guildA)
	waitFor(t, h, "the extracted memory to be forgotten", func() bool {
		_, err := store.Memories.Get(context.Background(), server, extracted.Memory.ID)
		return memory.ErrorCode(err) == memory.ENOTFOUND
	})
	if got := turnsOf(t, db, msg.ID); len(got) != 0 {
		t.Errorf("transcript still holds %q", got)
	}
	mustNotContain(t, "/stm show after the delete", h.stmShow(alice), "4412")
	hist, err := store.Memories.History(context.Background(), server, extracted.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := hist[len(hist)-1]; last.Action != memory.ActionDelete || last.Reason != "source message deleted" {
		t.Errorf("last history row of the extracted memory = %+v", last)
	}
	if m, err := store.Memories.Get(context.Background(), memory.PersonalOwner(alice.ID), saved); err != nil {
		t.Errorf("Remember this of the deleted message is gone: %v", err)
	} else {
		mustContain(t, "Remember this", m.Content, "my locker code is 4412")
	}

	t.Run("Bulk", func(t *testing.T) {
		h := h.in(t)
		var ids []string
		for _, text := range []string{"first spam", "second spam"} {
			h.ai.Script(fakeopenai.Text("Hm."))
			m := h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> "+text, me)
			h.chat(m)
			ids = append(ids, m.ID)
		}
		if err := h.fake.DispatchMessageDeleteBulk(guildA, channelA, ids...); err != nil {
			t.Fatal(err)
		}
		waitFor(t, h, "the bulk-deleted messages to leave the transcript", func() bool {
			return len(turnsOf(t, db, ids[0]))+len(turnsOf(t, db, ids[1])) == 0
		})
		mustNotContain(t, "/stm show after the bulk delete", h.stmShow(bob), "spam")
	})

	t.Run("Edit", func(t *testing.T) {
		h := h.in(t)
		h.ai.Script(fakeopenai.Text("See you then."))
		m := h.fake.GuildMessage(guildA, channelA, bob, "<@"+me.ID+"> meet at 5", me)
		h.chat(m)
		token := "ghp_" + "a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"
		edited := *m
		edited.Content = "<@" + me.ID + "> meet at 6, the repo token is " + token
		edited.EditedTimestamp = new(time.Time)
		*edited.EditedTimestamp = time.Now()
		if err := h.fake.DispatchMessageUpdate(&edited); err != nil {
			t.Fatal(err)
		}
		// A partial update (an embed unfurled) has no content and changes nothing.
		if err := h.fake.DispatchMessageUpdate(&discordgo.Message{ID: m.ID, ChannelID: channelA, GuildID: guildA}); err != nil {
			t.Fatal(err)
		}
		var got []string
		waitFor(t, h, "the edit to reach the transcript", func() bool {
			got = turnsOf(t, db, m.ID)
			return len(got) == 1 && got[0] != "meet at 5"
		})
		mustContain(t, "edited transcript", got[0], "meet at 6", "redacted")
		mustNotContain(t, "edited transcript", got[0], token, "<@")
		show := h.stmShow(bob)
		mustContain(t, "/stm show after the edit", show, "meet at 6")
		mustNotContain(t, "/stm show after the edit", show, "meet at 5", token)
	})
}

// TestRunGuildRemoval: GUILD_DELETE of a removal records the departure with the configured
// grace period, an outage records nothing, and GUILD_CREATE (the bot added back) cancels
// the departure.
func TestRunGuildRemoval(t *testing.T) {
	t.Parallel()
	h := startBotWith(t, map[string]string{"KIOKU_PIPELINE_MODE": "off", "KIOKU_GUILD_PURGE_AFTER": "48h"})
	store, _ := h.openDB()
	departure := func(guild string) *memory.Departure {
		guilds, err := store.Guilds.Guilds(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range guilds {
			if g.GuildID == guild {
				return g.Departure
			}
		}
		return nil
	}

	if err := h.fake.DispatchGuildDelete(guildB, true); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.DispatchGuildDelete(guildA, false); err != nil {
		t.Fatal(err)
	}
	var d *memory.Departure
	waitFor(t, h, "the removal to be recorded", func() bool { d = departure(guildA); return d != nil })
	if got := d.PurgeAfter.Sub(d.LeftAt); got != 48*time.Hour {
		t.Errorf("grace period %s, want KIOKU_GUILD_PURGE_AFTER's 48h", got)
	}
	// A turn in guild B round-trips after the outage event was read.
	alice, me := h.fake.NewUser("alice"), h.fake.BotUser()
	h.ai.Script(fakeopenai.Text("Still here."))
	h.chat(h.fake.GuildMessage(guildB, channelB, alice, "<@"+me.ID+"> are you there?", me))
	if d := departure(guildB); d != nil {
		t.Errorf("an outage recorded a departure: %+v", d)
	}

	if err := h.fake.DispatchGuildCreate(guildA); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "the departure to be cancelled", func() bool { return departure(guildA) == nil })
}
