package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// End-to-end tests of /kioku jobs and /memory undo through the real `kioku run` wiring.

// TestRunKiokuJobs: a member who manages the server sees that server's jobs (state, kind,
// attempts, when it runs, the last error) and nothing of another server's or of a DM's, and
// never the words a job's payload holds; a member without Manage Server is refused, and so
// is the command in a DM.
func TestRunKiokuJobs(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	store, _ := h.openDB()
	ctx := context.Background()
	const otherChannelA, dmChannel = "100000000000000012", "200000000000000061"
	enqueue := func(guild, channel, words string) int64 {
		t.Helper()
		id, _, err := store.Jobs.Enqueue(ctx, "extract", guild+"/"+channel, map[string]any{"guild_id": guild, "channel_id": channel,
			"checkpoint": map[string]any{"facts": []string{words}}}, memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	bury := func(id int64, cause string) {
		t.Helper()
		j, err := store.Jobs.Lease(ctx, "worker", nil, time.Hour)
		if err != nil || j == nil || j.ID != id {
			t.Fatalf("lease of job %d: %v, %v", id, j, err)
		}
		if err := store.Jobs.Bury(ctx, id, "worker", errors.New(cause)); err != nil {
			t.Fatal(err)
		}
	}
	deadA := enqueue(guildA, channelA, "Mika's PIN hint is the lighthouse")
	bury(deadA, "the model rejected the request")
	deadB := enqueue(guildB, channelB, "guild B's plans for the festival")
	bury(deadB, "provider of guild B exploded")
	dueA := enqueue(guildA, otherChannelA, "Haru is moving to Sapporo")
	dm := enqueue("", dmChannel, "a secret told in a DM")
	admin, member := h.fake.NewUser("admin"), h.fake.NewUser("member")
	entry := func(id int64) string { return "**#" + strconv.FormatInt(id, 10) + "**" }
	never := []string{entry(deadB), entry(dm), "<#" + channelB + ">", dmChannel, "guild B", "lighthouse", "Sapporo", "festival", "secret"}

	t.Run("Manager", func(t *testing.T) {
		h := h.in(t)
		r := h.command(guildA, channelA, admin, permAdmin, slash("kioku", "jobs"))
		if !r.Ephemeral {
			t.Error("/kioku jobs is not ephemeral")
		}
		text := r.Text()
		mustContain(t, "jobs", text, entry(deadA)+" · extract · dead · 1/5 attempts · <#"+channelA+">",
			"last error: the model rejected the request", entry(dueA)+" · extract · due · 0/5 attempts · <#"+otherChannelA+"> · runs now")
		mustNotContain(t, "jobs", text, never...)

		dead := h.command(guildA, channelA, admin, permAdmin, slash("kioku", "jobs", strOpt("state", "dead"))).Text()
		mustContain(t, "dead jobs", dead, entry(deadA))
		mustNotContain(t, "dead jobs", dead, append(never, entry(dueA))...)
		// Guild B's manager sees guild B's job, and nothing of guild A's.
		b := h.command(guildB, channelB, admin, permAdmin, slash("kioku", "jobs")).Text()
		mustContain(t, "guild B's jobs", b, entry(deadB), "provider of guild B exploded")
		mustNotContain(t, "guild B's jobs", b, entry(deadA), entry(dueA), entry(dm), "lighthouse", "Sapporo", "festival")
		none := h.command(guildB, channelB, admin, permAdmin, slash("kioku", "jobs", strOpt("state", "running"))).Text()
		mustContain(t, "no running jobs", none, "There are no running background jobs for this server.")
	})

	t.Run("MemberRefused", func(t *testing.T) {
		h := h.in(t)
		text := h.command(guildA, channelA, member, permMember, slash("kioku", "jobs")).Text()
		mustContain(t, "member's /kioku jobs", text, "This needs the Manage Server permission.")
		mustNotContain(t, "member's /kioku jobs", text, entry(deadA), entry(dueA), "rejected")
	})

	t.Run("DMRefused", func(t *testing.T) {
		h := h.in(t)
		text := h.command("", dmChannel, admin, 0, slash("kioku", "jobs")).Text()
		mustContain(t, "/kioku jobs in a DM", text, "This command only works in a server.")
		mustNotContain(t, "/kioku jobs in a DM", text, append(never, entry(deadA), entry(dueA))...)
	})
}

// TestRunMemoryUndo: /memory undo reverts an edit, a forget and an addition, in server and
// personal memory; it refuses when the memory moved past the version named, and it answers
// a member who may not change the memory exactly as it answers for an id that does not
// exist, changing nothing.
func TestRunMemoryUndo(t *testing.T) {
	t.Parallel()
	h := startBot(t)
	admin, alice, bob := h.fake.NewUser("admin"), h.fake.NewUser("alice"), h.fake.NewUser("bob")
	const aliceDM, bobDM = "200000000000000071", "200000000000000072"
	server := func(sub string, id int, opts ...string) reply {
		t.Helper()
		o := slash("memory", sub, intOpt("id", id))
		for i := 0; i+1 < len(opts); i += 2 {
			o.Options[0].Options = append(o.Options[0].Options, strOpt(opts[i], opts[i+1]))
		}
		return h.command(guildA, channelA, admin, permAdmin, o)
	}
	raid := rememberedID(t, h.command(guildA, channelA, admin, permAdmin, slash("memory", "add", strOpt("content", "Raid night is Friday"))))

	t.Run("Edit", func(t *testing.T) {
		h := h.in(t)
		server("edit", raid, "content", "Raid night is Saturday")
		r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "undo", intOpt("id", raid)))
		if !r.Ephemeral {
			t.Error("/memory undo is not ephemeral")
		}
		mustContain(t, "undo of an edit", r.Text(), "Undid the edit of (server) #"+strconv.Itoa(raid)+" by <@"+admin.ID+">",
			"now version 3: Raid night is Friday")
		mustContain(t, "show after undo", server("show", raid).Text(), "Raid night is Friday", "Version: 3")
		mustContain(t, "history after undo", server("history", raid).Text(), "v3 update", "(undo of change ")
		mustContain(t, "search after undo", h.command(guildA, channelA, alice, permMember, slash("memory", "search",
			strOpt("query", "Friday"))).Text(), "Raid night is Friday")
	})

	t.Run("ChangedSince", func(t *testing.T) {
		h := h.in(t)
		server("edit", raid, "content", "Raid night is Sunday")
		server("edit", raid, "content", "Raid night is Monday")
		r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "undo", intOpt("id", raid), intOpt("version", 4)))
		want := "Memory #" + strconv.Itoa(raid) + " changed since; see /memory history id:" + strconv.Itoa(raid) + "."
		if r.Text() != want {
			t.Errorf("undo of version 4 at version 5 = %q, want %q", r.Text(), want)
		}
		mustContain(t, "show after a refused undo", server("show", raid).Text(), "Raid night is Monday", "Version: 5")
	})

	t.Run("Forget", func(t *testing.T) {
		h := h.in(t)
		server("forget", raid)
		mustNotContain(t, "list after forget", h.command(guildA, channelA, admin, permAdmin, slash("memory", "list")).Text(), "Raid night")
		r := h.command(guildA, channelA, admin, permAdmin, slash("memory", "undo", intOpt("id", raid)))
		mustContain(t, "undo of a forget", r.Text(), "Undid the forget of (server) #"+strconv.Itoa(raid), "it is back", "Raid night is Monday")
		mustContain(t, "list after undo", h.command(guildA, channelA, alice, permMember, slash("memory", "list")).Text(), "Raid night is Monday")
	})

	t.Run("CreatePersonal", func(t *testing.T) {
		h := h.in(t)
		id := rememberedID(t, h.command("", aliceDM, alice, 0, slash("memory", "add", strOpt("content", "My cat is called Miso"))))
		r := h.command("", aliceDM, alice, 0, slash("memory", "undo", intOpt("id", id)))
		mustContain(t, "undo of an addition", r.Text(), "Undid the addition of (personal) #"+strconv.Itoa(id), "it is forgotten",
			"/memory recover id:"+strconv.Itoa(id)+" scope:personal")
		mustContain(t, "list after undo", h.command("", aliceDM, alice, 0, slash("memory", "list")).Text(), "no memories")
	})

	// A personal memory of alice's with one edit: something bob could undo, were it his.
	peanuts := rememberedID(t, h.command("", aliceDM, alice, 0, slash("memory", "add", strOpt("content", "I am allergic to peanuts"))))
	h.command("", aliceDM, alice, 0, slash("memory", "edit", intOpt("id", peanuts), strOpt("content", "I am allergic to peanuts and cashews")))
	const missing = 9999

	t.Run("RefusedForNonOwnerOfPersonalMemory", func(t *testing.T) {
		h := h.in(t)
		for _, where := range []struct{ guild, channel string }{{"", bobDM}, {guildA, channelA}} {
			undo := func(id int) string {
				return h.command(where.guild, where.channel, bob, permAdmin, slash("memory", "undo", intOpt("id", id),
					strOpt("scope", "personal"))).Text()
			}
			got, none := undo(peanuts), undo(missing)
			want := strings.ReplaceAll(none, "#"+strconv.Itoa(missing), "#"+strconv.Itoa(peanuts))
			if got != want || !strings.Contains(got, "There is no memory") {
				t.Errorf("bob's undo of alice's memory in %q = %q, want the missing-id answer %q", where.guild, got, want)
			}
		}
		mustContain(t, "alice's memory after bob's tries", h.command("", aliceDM, alice, 0, slash("memory", "show",
			intOpt("id", peanuts))).Text(), "peanuts and cashews", "Version: 2")
	})

	t.Run("RefusedForMemberWithoutPermission", func(t *testing.T) {
		h := h.in(t)
		undo := func(id int) string {
			return h.command(guildA, channelA, alice, permMember, slash("memory", "undo", intOpt("id", id))).Text()
		}
		got, none := undo(raid), undo(missing)
		if got != none || !strings.Contains(got, "Manage Server") {
			t.Errorf("member's undo of a server memory = %q, want the answer for a missing id %q", got, none)
		}
		mustContain(t, "server memory after the member's try", server("show", raid).Text(), "Raid night is Monday", "Version: 7")
	})
}
