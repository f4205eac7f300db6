package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
)

// jobFixture is a database holding jobs in every state, in two guilds and a DM. Ids in
// order of creation:
//
//	1 dead, guild g1, finished 40 days ago     5 running, guild g2
//	2 done, guild g1, finished 40 days ago     6 due, guild g1
//	3 dead, guild g2, finished 40 days ago     7 due, a DM, with a checkpoint of words
//	4 dead, guild g2, finished an hour ago
type jobFixture struct {
	env map[string]string
}

func newJobFixture(t *testing.T) jobFixture {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "k.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clock := testkit.NewClock(time.Now().Add(-40 * 24 * time.Hour))
	store.Now = clock.Now
	enqueue := func(guild, channel string, payload map[string]any) int64 {
		t.Helper()
		if payload == nil {
			payload = map[string]any{}
		}
		payload["guild_id"], payload["channel_id"] = guild, channel
		id, _, err := store.Jobs.Enqueue(ctx, "extract", guild+"/"+channel, payload, memory.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// finish enqueues a job, leases it at once (it is the only one due) and ends it.
	finish := func(guild, channel string, end func(id int64) error) {
		t.Helper()
		id := enqueue(guild, channel, nil)
		j, err := store.Jobs.Lease(ctx, "worker", nil, 24*time.Hour)
		if err != nil || j == nil || j.ID != id {
			t.Fatalf("lease of job %d: %v, %v", id, j, err)
		}
		if err := end(id); err != nil {
			t.Fatal(err)
		}
	}
	bury := func(id int64) error {
		return store.Jobs.Bury(ctx, id, "worker", errors.New("the model rejected the request"))
	}
	finish("g1", "c1", bury)
	finish("g1", "c2", func(id int64) error { return store.Jobs.Complete(ctx, id, "worker") })
	finish("g2", "c3", bury)
	clock.Advance(40*24*time.Hour - time.Hour)
	finish("g2", "c4", bury)
	finish("g2", "c5", func(int64) error { return nil })
	enqueue("g1", "c6", nil)
	enqueue("", "d7", map[string]any{"checkpoint": map[string]any{"facts": []string{"Aiko's passport expires in May"}}})
	return jobFixture{env: map[string]string{"KIOKU_DB": db, "KIOKU_HTTP_ADDR": ""}}
}

// listJSON runs `kioku jobs list --json` with args and returns the jobs as decoded maps.
func (f jobFixture) listJSON(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	code, out, stderr := runApp(t, f.env, "", append([]string{"jobs", "list", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("jobs list %v: exit %d: %s", args, code, stderr)
	}
	var res struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("jobs list --json: %v\n%s", err, out)
	}
	return res.Jobs
}

// ids returns the ids of decoded jobs, in order.
func ids(jobs []map[string]any) []int {
	out := []int{}
	for _, j := range jobs {
		out = append(out, int(j["id"].(float64)))
	}
	return out
}

// TestJobsList: the listing filters by state (in the CLI's words) and guild, newest first,
// and its JSON holds the same keys for every job and never the payload.
func TestJobsList(t *testing.T) {
	f := newJobFixture(t)
	all := f.listJSON(t)
	if got := ids(all); !slices.Equal(got, []int{7, 6, 5, 4, 3, 2, 1}) {
		t.Fatalf("all jobs = %v", got)
	}
	wantKeys := []string{"attempts", "channel_id", "created_at", "guild_id", "id", "kind", "last_error", "max_attempts",
		"run_after", "state", "updated_at"}
	states := map[int]string{}
	for _, j := range all {
		if keys := slices.Sorted(maps.Keys(j)); !slices.Equal(keys, wantKeys) {
			t.Errorf("job %v has keys %v, want %v", j["id"], keys, wantKeys)
		}
		states[int(j["id"].(float64))] = j["state"].(string)
	}
	if want := map[int]string{1: "dead", 2: "done", 3: "dead", 4: "dead", 5: "running", 6: "due", 7: "due"}; !maps.Equal(states, want) {
		t.Errorf("states = %v, want %v", states, want)
	}
	if all[0]["guild_id"] != "" || all[0]["channel_id"] != "d7" || all[6]["guild_id"] != "g1" ||
		all[6]["last_error"] != "the model rejected the request" {
		t.Errorf("places and errors: %v / %v", all[0], all[6])
	}
	for name, c := range map[string]struct {
		args []string
		want []int
	}{
		"DeadOfGuild": {[]string{"--state", "dead", "--guild", "g2"}, []int{4, 3}},
		"Due":         {[]string{"--state", "due"}, []int{7, 6}},
		"Running":     {[]string{"--state", "running"}, []int{5}},
		"Done":        {[]string{"--state", "done"}, []int{2}},
		"Guild":       {[]string{"--guild", "g1"}, []int{6, 2, 1}},
		"Limit":       {[]string{"--limit", "2"}, []int{7, 6}},
		"NoSuchGuild": {[]string{"--guild", "g9"}, []int{}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := ids(f.listJSON(t, c.args...)); !slices.Equal(got, c.want) {
				t.Errorf("jobs list %v = %v, want %v", c.args, got, c.want)
			}
		})
	}

	code, out, stderr := runApp(t, f.env, "", "jobs", "list", "--state", "due")
	if code != 0 {
		t.Fatalf("jobs list: exit %d: %s", code, stderr)
	}
	mustContain(t, "text listing", out, "RUN AFTER", "DM", "d7", "g1", "c6", "now")
	mustNotContain(t, "text listing", out, "passport", "c4")

	for _, bad := range [][]string{{"--state", "stuck"}, {"--limit", "0"}, {"extra"}} {
		if code, _, stderr := runApp(t, f.env, "", append([]string{"jobs", "list"}, bad...)...); code != 2 || stderr == "" {
			t.Errorf("jobs list %v: exit %d, %q; want a usage error", bad, code, stderr)
		}
	}
}

// TestJobsShow: one job in full, its payload included (for the operator who owns the
// database), as text and JSON; an unknown id is a clear error.
func TestJobsShow(t *testing.T) {
	f := newJobFixture(t)
	code, out, stderr := runApp(t, f.env, "", "jobs", "show", "7", "--json")
	if code != 0 {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "kind", "state", "guild_id", "channel_id", "attempts", "max_attempts", "run_after",
		"last_error", "created_at", "updated_at", "dedup_key", "lease_owner", "payload"} {
		if _, ok := j[k]; !ok {
			t.Errorf("jobs show --json lacks %q: %s", k, out)
		}
	}
	if j["state"] != "due" || j["dedup_key"] != "/d7" || !strings.Contains(out, "passport") {
		t.Errorf("jobs show --json = %s", out)
	}
	code, out, _ = runApp(t, f.env, "", "jobs", "show", "#5")
	if code != 0 {
		t.Fatalf("jobs show #5: exit %d", code)
	}
	mustContain(t, "jobs show", out, "Job        #5", "running", "Leased by", "worker", "Payload:", `"guild_id": "g2"`)

	code, _, stderr = runApp(t, f.env, "", "jobs", "show", "99")
	if code != 1 || !strings.Contains(stderr, "There is no job #99.") {
		t.Errorf("show of a missing job: exit %d, %q", code, stderr)
	}
	if code, _, _ := runApp(t, f.env, "", "jobs", "show"); code != 2 {
		t.Errorf("show without an id: exit %d, want 2", code)
	}
}

// TestJobsRequeue: dead jobs go back to due with fresh attempts; a job that is not dead is
// refused with a message naming its state, and the refusal makes the exit code 1 without
// stopping the other ids.
func TestJobsRequeue(t *testing.T) {
	f := newJobFixture(t)
	code, out, stderr := runApp(t, f.env, "", "jobs", "requeue", "1", "3")
	if code != 0 {
		t.Fatalf("requeue: exit %d: %s", code, stderr)
	}
	mustContain(t, "requeue", out, "requeued job #1", "requeued job #3")
	for _, j := range f.listJSON(t, "--state", "due") {
		if id := j["id"].(float64); (id == 1 || id == 3) && j["attempts"].(float64) != 0 {
			t.Errorf("requeued job %v kept its attempts: %v", id, j)
		}
	}
	if got := ids(f.listJSON(t, "--state", "due")); !slices.Equal(got, []int{7, 6, 3, 1}) {
		t.Errorf("due after requeue = %v", got)
	}

	code, out, stderr = runApp(t, f.env, "", "jobs", "requeue", "5", "4", "6")
	if code != 1 {
		t.Fatalf("requeue of running and due jobs: exit %d, want 1", code)
	}
	mustContain(t, "refusals", stderr, "Job #5 is running, not dead; only dead jobs can be requeued.",
		"Job #6 is waiting to run, not dead; only dead jobs can be requeued.")
	mustContain(t, "requeue next to refusals", out, "requeued job #4")
	if got := ids(f.listJSON(t, "--state", "running")); !slices.Equal(got, []int{5}) {
		t.Errorf("a refused requeue changed the running job: running = %v", got)
	}

	code, out, _ = runApp(t, f.env, "", "jobs", "requeue", "2", "--json")
	var res struct {
		Requeued []int64 `json:"requeued"`
		Refused  []struct {
			ID    int64  `json:"id"`
			Error string `json:"error"`
		} `json:"refused"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || len(res.Requeued) != 0 || len(res.Refused) != 1 ||
		res.Refused[0].ID != 2 || !strings.Contains(res.Refused[0].Error, "is done, not dead") {
		t.Errorf("requeue of a done job --json: exit %d, %s", code, out)
	}
	if code, _, stderr := runApp(t, f.env, "", "jobs", "requeue", "99"); code != 1 || !strings.Contains(stderr, "There is no job #99.") {
		t.Errorf("requeue of a missing job: exit %d, %q", code, stderr)
	}
	if code, _, _ := runApp(t, f.env, "", "jobs", "requeue", "x"); code != 2 {
		t.Errorf("requeue of a bad id: exit %d, want 2", code)
	}
}

// TestJobsPurge: without --confirm a purge only counts; with it, it deletes exactly the
// finished jobs its flags select. Unfinished states are refused.
func TestJobsPurge(t *testing.T) {
	f := newJobFixture(t)
	code, out, stderr := runApp(t, f.env, "", "jobs", "purge", "--state", "dead", "--older-than", "30d")
	if code != 0 {
		t.Fatalf("purge preview: exit %d: %s", code, stderr)
	}
	mustContain(t, "preview", out, "2 dead jobs that finished more than 30d ago would be deleted", "Nothing is deleted yet",
		"kioku jobs purge --state dead --older-than 30d --confirm")
	if got := ids(f.listJSON(t)); len(got) != 7 {
		t.Fatalf("the preview deleted jobs: %v left", got)
	}
	code, out, _ = runApp(t, f.env, "", "jobs", "purge", "--state", "dead", "--guild", "g2", "--json")
	var preview struct {
		Matched int  `json:"matched"`
		Purged  bool `json:"purged"`
	}
	if err := json.Unmarshal([]byte(out), &preview); err != nil || code != 0 || preview.Matched != 2 || preview.Purged {
		t.Fatalf("purge preview --json: exit %d, %s", code, out)
	}

	code, out, stderr = runApp(t, f.env, "", "jobs", "purge", "--state", "dead", "--older-than", "30d", "--confirm")
	if code != 0 {
		t.Fatalf("purge: exit %d: %s", code, stderr)
	}
	mustContain(t, "purge", out, "Deleted 2 dead jobs")
	if got := ids(f.listJSON(t)); !slices.Equal(got, []int{7, 6, 5, 4, 2}) {
		t.Errorf("after purging old dead jobs: %v", got)
	}
	code, out, _ = runApp(t, f.env, "", "jobs", "purge", "--state", "done", "--confirm", "--json")
	var done struct {
		Deleted int  `json:"deleted"`
		Purged  bool `json:"purged"`
	}
	if err := json.Unmarshal([]byte(out), &done); err != nil || code != 0 || done.Deleted != 1 || !done.Purged {
		t.Fatalf("purge of done jobs --json: exit %d, %s", code, out)
	}
	if got := ids(f.listJSON(t)); !slices.Equal(got, []int{7, 6, 5, 4}) {
		t.Errorf("after purging done jobs: %v", got)
	}

	for _, bad := range [][]string{{}, {"--state", "due", "--confirm"}, {"--state", "running"}, {"--state", "all", "--confirm"},
		{"--state", "dead", "--older-than", "soon"}} {
		if code, _, stderr := runApp(t, f.env, "", append([]string{"jobs", "purge"}, bad...)...); code != 2 || stderr == "" {
			t.Errorf("jobs purge %v: exit %d, %q; want a usage error", bad, code, stderr)
		}
	}
	if got := ids(f.listJSON(t)); len(got) != 4 {
		t.Errorf("refused purges deleted jobs: %v left", got)
	}
}

// TestDoctorSuggestsRequeue: the command doctor suggests for dead jobs exists and, run as
// printed, requeues them.
func TestDoctorSuggestsRequeue(t *testing.T) {
	f := newJobFixture(t)
	code, out, stderr := runApp(t, f.env, "", "doctor", "--offline")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	_, suggestion, ok := strings.Cut(out, "requeue them: ")
	if !ok {
		t.Fatalf("doctor suggests no requeue:\n%s", out)
	}
	suggestion, _, _ = strings.Cut(suggestion, "\n")
	if suggestion != "kioku jobs requeue 4 3 1" {
		t.Errorf("suggestion = %q, want the three dead jobs", suggestion)
	}
	args := strings.Fields(suggestion)
	if code, _, stderr := runApp(t, f.env, "", args[1:]...); code != 0 {
		t.Fatalf("%s: exit %d: %s", suggestion, code, stderr)
	}
	if got := ids(f.listJSON(t, "--state", "dead")); len(got) != 0 {
		t.Errorf("dead after the suggested command: %v", got)
	}
	_, out, _ = runApp(t, f.env, "", "doctor", "--offline")
	mustNotContain(t, "doctor after requeue", out, "dead jobs")
}
