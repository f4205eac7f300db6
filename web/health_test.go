package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// deadJob enqueues a job of kind for guild, learned in channel, and lets it die.
func deadJob(t testing.TB, s stores, kind, guild, channel string) int64 {
	t.Helper()
	ctx := t.Context()
	id, _, err := s.Jobs.Enqueue(ctx, kind, kind+"-key", map[string]string{"guild_id": guild, "channel_id": channel}, memory.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Jobs.Lease(ctx, "worker", []string{kind}, time.Minute)
	if err != nil || j == nil || j.ID != id {
		t.Fatalf("lease job %d: %+v %v", id, j, err)
	}
	if err := s.Jobs.Bury(ctx, id, "worker", fmt.Errorf("the model refused")); err != nil {
		t.Fatal(err)
	}
	return id
}

// jobState is the stored state of job id.
func jobState(t testing.TB, s stores, id int64) string {
	t.Helper()
	j, err := s.Jobs.GetJob(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.State
}

// TestHealthManager: a manager sees the server's score, jobs and budget, requeues its dead
// jobs (never another server's), and repairs the search indexes at most once an hour, the
// repair in the audit; nothing on the page names a channel they can't see or quotes a memory.
func TestHealthManager(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			w := newWorld(t)
			s := eng.open(t)
			storePageRules(t, s)
			secret := rememberServer(t, s, w.bob.ID, chanMods, "The moderators' secret word is pelican")
			home := deadJob(t, s, "web-test-home", guildHome, chanMods)
			other := deadJob(t, s, "web-test-other", guildOther, chanElse)
			d := newDashboard(t, w, s)
			b := signInWith(d, w.alice, roleManager)
			path := "/servers/" + guildHome + "/health"

			page := b.get(path)
			if page.StatusCode != http.StatusOK {
				t.Fatalf("health page: %d\n%s", page.StatusCode, page.body)
			}
			for _, want := range []string{"/100", "web-test-home", "of 500"} {
				if !strings.Contains(page.body, want) {
					t.Errorf("the health page misses %q", want)
				}
			}
			for _, leak := range []string{"web-test-other", chanMods, secret.Content} {
				if strings.Contains(page.body, leak) {
					t.Errorf("the health page shows %q", leak)
				}
			}
			csrf := csrfOf(t, page.body)

			if got := b.post(path+"/requeue", url.Values{"csrf": {csrf}, "id": {fmt.Sprint(other)}}); got.StatusCode != http.StatusNotFound {
				t.Errorf("requeue of another server's job: %d", got.StatusCode)
			}
			res := b.post(path+"/requeue", url.Values{"csrf": {csrf}})
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path+"?requeued=1" {
				t.Fatalf("requeue: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), res.body)
			}
			if got := jobState(t, s, home); got != memory.JobQueued {
				t.Errorf("the server's dead job is %s after requeue", got)
			}
			if got := jobState(t, s, other); got != memory.JobDead {
				t.Errorf("another server's dead job is %s", got)
			}

			res = b.post(path+"/repair", url.Values{"csrf": {csrf}})
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path+"?repair=done" {
				t.Fatalf("repair: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), res.body)
			}
			log, err := s.Health.RepairLog(t.Context(), time.Now().Add(-time.Hour))
			if err != nil || len(log) != 1 || log[0].Action != maintenance.ActionReindex || log[0].Outcome != maintenance.OutcomeExecuted {
				t.Errorf("repair audit: %+v %v", log, err)
			}
			if res := b.post(path+"/repair", url.Values{"csrf": {csrf}}); res.Header.Get("Location") != path+"?repair=wait" {
				t.Errorf("a second repair within the hour: %s", res.Header.Get("Location"))
			}
		})
	}
}

// TestHealthRefusals: a member who does not manage the server, an editor included, gets the
// page of a missing server for the health page and its actions, and nothing changes; an action
// without the CSRF token is refused.
func TestHealthRefusals(t *testing.T) {
	w := newWorld(t)
	eng, _ := sqliteEngine(t)
	s := eng.open(t)
	storePageRules(t, s)
	job := deadJob(t, s, "web-test-home", guildHome, chanGeneral)
	d := newDashboard(t, w, s)
	b := signInWith(d, w.alice, roleEditor, roleMod)
	missing := b.get("/servers/" + guildOther + "/health")
	if missing.StatusCode != http.StatusNotFound {
		t.Fatalf("another server's health: %d", missing.StatusCode)
	}
	path := "/servers/" + guildHome + "/health"
	if got := b.get(path); got.StatusCode != http.StatusNotFound || got.body != missing.body {
		t.Errorf("health for a non-manager: %d\n%s", got.StatusCode, got.body)
	}
	csrf := csrfOf(t, b.get("/me").body)
	for _, action := range []string{"/requeue", "/repair"} {
		if got := b.post(path+action, url.Values{"csrf": {csrf}}); got.StatusCode != http.StatusNotFound || got.body != missing.body {
			t.Errorf("%s by a non-manager: %d", action, got.StatusCode)
		}
	}
	manager := signInWith(d, w.bob, roleManager)
	if got := manager.post(path+"/requeue", url.Values{}); got.StatusCode != http.StatusForbidden {
		t.Errorf("requeue without the CSRF token: %d", got.StatusCode)
	}
	if got := jobState(t, s, job); got != memory.JobDead {
		t.Errorf("a refused requeue left the job %s", got)
	}
	if log, err := s.Health.RepairLog(t.Context(), time.Now().Add(-time.Hour)); err != nil || len(log) != 0 {
		t.Errorf("a refused repair was recorded: %+v %v", log, err)
	}
}
