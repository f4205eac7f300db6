package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

const jobsUsage = `usage: kioku jobs <command> [flags]
  list     [--state due|running|dead|done|all] [--guild ID] [--limit N]
  show     ID                      one job in full, its payload included
  requeue  ID...                   dead jobs back to due, with fresh attempts
  purge    --state dead|done [--older-than 30d] [--guild ID] [--confirm]
every command takes --json`

// runJobs is `kioku jobs`: the operator's view of the background pipeline's queue, and the
// way back for jobs that failed for good once their cause is fixed.
func runJobs(ctx context.Context, app *App, args []string) error {
	return runStoreCommand(ctx, app, "jobs", jobsUsage, args, map[string]storeCommand{
		"list": jobsList, "show": jobsShow, "requeue": jobsRequeue, "purge": jobsPurge,
	})
}

// jobStateNames are the states the CLI speaks of, and the stored states each one means: a
// queued job is "due" (now, or when its backoff or idle timer runs out; RUN AFTER says
// when), a leased one "running".
var jobStateNames = map[string][]string{
	"due":     {memory.JobQueued},
	"running": {memory.JobLeased},
	"dead":    {memory.JobDead},
	"done":    {memory.JobDone},
	"all":     nil,
}

// jobStateName is the CLI's name of a stored state.
func jobStateName(stored string) string {
	switch stored {
	case memory.JobQueued:
		return "due"
	case memory.JobLeased:
		return "running"
	}
	return stored
}

// jobView is a job as `kioku jobs list` shows it: what it is, where its conversation
// happened, and how it is going, without its payload.
type jobView struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	State       string    `json:"state"`
	GuildID     string    `json:"guild_id"`
	ChannelID   string    `json:"channel_id"`
	Attempts    int       `json:"attempts"`
	MaxAttempts int       `json:"max_attempts"`
	RunAfter    time.Time `json:"run_after"`
	LastError   string    `json:"last_error"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// jobDetail is a job as `kioku jobs show` shows it: everything, the payload included. A
// queued job's payload may hold the words of the conversation it works on; it is printed
// for the operator who owns the database and never logged.
type jobDetail struct {
	jobView
	DedupKey    string          `json:"dedup_key"`
	LeaseOwner  string          `json:"lease_owner"`
	LeasedUntil time.Time       `json:"leased_until,omitzero"`
	Payload     json.RawMessage `json:"payload"`
}

func newJobView(j *memory.Job) jobView {
	var where struct {
		GuildID   string `json:"guild_id"`
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(j.Payload, &where) // a payload of another shape names no place
	return jobView{ID: j.ID, Kind: j.Kind, State: jobStateName(j.State), GuildID: where.GuildID, ChannelID: where.ChannelID,
		Attempts: j.Attempts, MaxAttempts: j.MaxAttempts, RunAfter: j.RunAfter, LastError: j.LastError,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}
}

// place names where a job's conversation happened, for tables.
func (v jobView) place() (guild, channel string) {
	guild, channel = v.GuildID, v.ChannelID
	if guild == "" {
		guild = "DM"
		if channel == "" {
			guild = "-"
		}
	}
	if channel == "" {
		channel = "-"
	}
	return guild, channel
}

func jobsList(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "jobs list")
	state := fs.String("state", "all", "due, running, dead, done or all")
	guild := fs.String("guild", "", "only the jobs of this server (guild id)")
	limit := fs.Int("limit", 50, "at most this many, newest first (up to 500)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	states, ok := jobStateNames[*state]
	if !ok {
		return usagef("--state %s: use due, running, dead, done or all", *state)
	}
	if *limit <= 0 || *limit > 500 {
		return usagef("--limit %d: use 1 to 500", *limit)
	}
	jobs, err := store.Jobs.FindJobs(ctx, memory.JobFilter{States: states, GuildID: *guild, Limit: *limit})
	if err != nil {
		return err
	}
	views := make([]jobView, len(jobs))
	for i, j := range jobs {
		views[i] = newJobView(j)
	}
	if *asJSON {
		return writeJSON(app.Stdout, map[string]any{"jobs": views})
	}
	if len(views) == 0 {
		fmt.Fprintln(app.Stdout, "No jobs match.")
		return nil
	}
	now := store.Now()
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tGUILD\tCHANNEL\tATTEMPTS\tRUN AFTER\tUPDATED\tLAST ERROR")
	for _, v := range views {
		g, c := v.place()
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", v.ID, v.Kind, v.State, g, c, v.Attempts, v.MaxAttempts,
			runAfterText(v, now), v.UpdatedAt.Local().Format(time.DateTime), oneLine(v.LastError))
	}
	return tw.Flush()
}

// runAfterText says when a job runs: only due jobs are waiting for that time.
func runAfterText(v jobView, now time.Time) string {
	switch {
	case v.State != "due":
		return "-"
	case !v.RunAfter.After(now):
		return "now"
	}
	return v.RunAfter.Local().Format(time.DateTime)
}

func jobsShow(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "jobs show")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	ids, err := parseJobIDs(pos)
	if err != nil || len(ids) != 1 {
		return usagef("kioku jobs show ID")
	}
	j, err := store.Jobs.GetJob(ctx, ids[0])
	if err != nil {
		return err
	}
	d := jobDetail{jobView: newJobView(j), DedupKey: j.DedupKey, LeaseOwner: j.LeaseOwner, LeasedUntil: j.LeasedUntil, Payload: j.Payload}
	if *asJSON {
		return writeJSON(app.Stdout, d)
	}
	printJob(app.Stdout, d, store.Now())
	return nil
}

func printJob(w io.Writer, d jobDetail, now time.Time) {
	g, c := d.place()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Job\t#%d\n", d.ID)
	fmt.Fprintf(tw, "Kind\t%s\n", d.Kind)
	fmt.Fprintf(tw, "State\t%s\n", d.State)
	fmt.Fprintf(tw, "Guild\t%s\n", g)
	fmt.Fprintf(tw, "Channel\t%s\n", c)
	fmt.Fprintf(tw, "Attempts\t%d of %d\n", d.Attempts, d.MaxAttempts)
	fmt.Fprintf(tw, "Run after\t%s\n", runAfterText(d.jobView, now))
	if d.LeaseOwner != "" {
		fmt.Fprintf(tw, "Leased by\t%s until %s\n", d.LeaseOwner, d.LeasedUntil.Local().Format(time.DateTime))
	}
	fmt.Fprintf(tw, "Dedup key\t%s\n", d.DedupKey)
	fmt.Fprintf(tw, "Created\t%s\n", d.CreatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(tw, "Updated\t%s\n", d.UpdatedAt.Local().Format(time.DateTime))
	if d.LastError != "" {
		fmt.Fprintf(tw, "Last error\t%s\n", d.LastError)
	}
	tw.Flush()
	payload := string(d.Payload)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, d.Payload, "", "  "); err == nil {
		payload = pretty.String()
	}
	fmt.Fprintf(w, "Payload:\n%s\n", payload)
}

func jobsRequeue(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "jobs requeue")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	ids, err := parseJobIDs(pos)
	if err != nil {
		return err
	}
	type refusal struct {
		ID    int64  `json:"id"`
		Error string `json:"error"`
	}
	requeued, refused := []int64{}, []refusal{}
	for _, id := range ids {
		err := store.Jobs.Requeue(ctx, id)
		switch code := memory.ErrorCode(err); {
		case err == nil:
			requeued = append(requeued, id)
		case code == memory.EINTERNAL:
			return err
		default:
			refused = append(refused, refusal{id, memory.ErrorMessage(err)})
		}
	}
	if *asJSON {
		if err := writeJSON(app.Stdout, map[string]any{"requeued": requeued, "refused": refused}); err != nil {
			return err
		}
	} else {
		for _, id := range requeued {
			fmt.Fprintf(app.Stdout, "requeued job #%d: due now, with fresh attempts\n", id)
		}
	}
	if len(refused) > 0 {
		msgs := make([]string, len(refused))
		for i, r := range refused {
			msgs[i] = r.Error
		}
		return memory.Errorf(memory.ECONFLICT, "%s", strings.Join(msgs, "\nkioku: "))
	}
	return nil
}

// purgeStates are the states a purge may name: only finished jobs.
var purgeStates = map[string]string{"dead": memory.JobDead, "done": memory.JobDone}

// jobsPurge deletes finished jobs before retention would. Without --confirm it only counts
// them: a purge cannot be undone.
func jobsPurge(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "jobs purge")
	state := fs.String("state", "", "dead or done (required)")
	olderThan := fs.String("older-than", "", "only jobs that finished longer ago than this (30d, 12h)")
	guild := fs.String("guild", "", "only the jobs of this server (guild id)")
	confirm := fs.Bool("confirm", false, "delete for real (without it, only count)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	stored, ok := purgeStates[*state]
	if !ok {
		return usagef("--state %q: use dead or done (queued and running jobs are work still to do)", *state)
	}
	f := memory.JobFilter{States: []string{stored}, GuildID: *guild}
	desc := ""
	if *guild != "" {
		desc += " of guild " + *guild
	}
	if *olderThan != "" {
		age, err := parseDays(*olderThan)
		if err != nil || age <= 0 {
			return usagef("--older-than %q: use a number of days (30d) or a duration (12h)", *olderThan)
		}
		f.UpdatedBefore = store.Now().Add(-age)
		desc += " that finished more than " + *olderThan + " ago"
	}
	jobs := func(n int) string {
		if n == 1 {
			return fmt.Sprintf("1 %s job%s", *state, desc)
		}
		return fmt.Sprintf("%d %s jobs%s", n, *state, desc)
	}
	if !*confirm {
		n, err := store.Jobs.CountJobs(ctx, f)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(app.Stdout, map[string]any{"state": *state, "matched": n, "purged": false})
		}
		fmt.Fprintf(app.Stdout, "%s would be deleted. Nothing is deleted yet; to delete them run:\n  %s --confirm\n",
			jobs(n), purgeCommand(*state, *olderThan, *guild))
		return nil
	}
	n, err := store.Jobs.PurgeJobs(ctx, f)
	if err != nil {
		return err
	}
	app.logger.Info("jobs purged", "state", stored, "guild_id", *guild, "older_than", *olderThan, "jobs", n)
	if *asJSON {
		return writeJSON(app.Stdout, map[string]any{"state": *state, "deleted": n, "purged": true})
	}
	fmt.Fprintf(app.Stdout, "Deleted %s.\n", jobs(n))
	return nil
}

// purgeCommand repeats a purge's flags, for the preview to print.
func purgeCommand(state, olderThan, guild string) string {
	cmd := "kioku jobs purge --state " + state
	if olderThan != "" {
		cmd += " --older-than " + olderThan
	}
	if guild != "" {
		cmd += " --guild " + guild
	}
	return cmd
}

func parseJobIDs(args []string) ([]int64, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one job id")
	}
	var ids []int64
	for _, a := range args {
		for part := range strings.SplitSeq(a, ",") {
			id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(part), "#"), 10, 64)
			if err != nil || id <= 0 {
				return nil, usagef("%q is not a job id", part)
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}
