package web

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// The health page, for the members who manage a server: the doctor's score and domains, the
// server's background jobs (dead, due, running), its model budget spent today, the embedding
// tracker, and the last maintenance runs and repairs; with the actions a manager may take:
// requeue the server's dead jobs, and repair the search indexes. Every request is decided
// again for the member (a manager now, or the missing page), and nothing on it quotes a
// memory: counts, job kinds and states, and a finding's fix only when it names nothing
// outside this server.

// healthPage serves a server's health and its manager actions.
type healthPage struct {
	guildGate
	doctor  Doctor
	jobs    JobBoard
	repairs IndexRepairer
	budget  BudgetFunc
	log     *slog.Logger
	now     func() time.Time
	tabs    tabBar
}

// Bounds of the page: the jobs of each state it lists, and how far back it reads repairs.
const (
	healthJobs         = 15
	healthRepairWindow = 7 * 24 * time.Hour
	healthRepairsShown = 10
	// requeueScan bounds the dead jobs one requeue press reads.
	requeueScan = 500
	// repairCooldown is how soon the indexes may be repaired again from here: the self-repair
	// policy's own cooldown for a reindex, so managers pressing cannot keep the store busy.
	repairCooldown = time.Hour
)

// newHealthPage returns the health page, or nil when deps lack its parts.
func newHealthPage(deps Deps, view *views, cfg Config) *healthPage {
	if deps.Doctor == nil || deps.Jobs == nil || deps.Repairs == nil || deps.Budget == nil {
		return nil
	}
	return &healthPage{guildGate: guildGate{view: view}, doctor: deps.Doctor, jobs: deps.Jobs, repairs: deps.Repairs,
		budget: deps.Budget, log: cfg.Logger, now: cfg.Now}
}

// routes adds the health page and its actions to mux; without their parts there are none.
func (hp *healthPage) routes(mux *http.ServeMux, a *signIn) {
	if hp == nil {
		return
	}
	mux.Handle("GET /servers/{guild}/health", a.signedIn(hp.page))
	mux.Handle("POST /servers/{guild}/health/requeue", a.signedIn(a.changes(hp.requeue)))
	mux.Handle("POST /servers/{guild}/health/repair", a.signedIn(a.changes(hp.repair)))
}

// page shows srv's health to a manager.
func (hp *healthPage) page(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := hp.open(w, r, v, needManager)
	if !ok {
		return
	}
	body, err := hp.read(r, v, srv)
	if err != nil {
		hp.view.internal(w, r, v, "couldn't read a server's health", err)
		return
	}
	body.Note = hp.note(v, r)
	hp.view.render(w, r, v, http.StatusOK, "health", "web.health.title", body, srv.Name)
}

// note is what the previous action did, from the fixed query its redirect carries.
func (hp *healthPage) note(v *visit, r *http.Request) string {
	q := r.URL.Query()
	if n, err := strconv.Atoi(q.Get("requeued")); err == nil && n >= 0 {
		return i18n.N(v.lang, "web.health.requeued", n)
	}
	switch q.Get("repair") {
	case "done":
		return textFor(v, "web.health.repaired")
	case "wait":
		return textFor(v, "web.health.repair_wait")
	}
	return ""
}

// read gathers srv's health.
func (hp *healthPage) read(r *http.Request, v *visit, srv server) (healthBody, error) {
	ctx := r.Context()
	body := healthBody{Base: "/servers/" + srv.GuildID + "/health", serverTabs: hp.tabs.tabs(srv, tabHealth)}
	d, err := hp.doctor.Diagnose(ctx)
	if err != nil {
		return body, err
	}
	body.fillReport(v, maintenance.Assess(d), memory.ServerOwner(srv.GuildID).Key())
	body.fillIndex(d.Index)
	for _, st := range []string{memory.JobDead, memory.JobQueued, memory.JobLeased} {
		jobs, err := hp.jobs.FindJobs(ctx, memory.JobFilter{States: []string{st}, GuildID: srv.GuildID, Limit: healthJobs})
		if err != nil {
			return body, err
		}
		group := jobGroup{State: jobStateWord(v, st), Full: len(jobs) == healthJobs}
		for _, j := range jobs {
			group.Jobs = append(group.Jobs, jobViewOf(v, srv, j, hp.now()))
		}
		if st == memory.JobDead {
			body.Dead = len(jobs)
		}
		body.Jobs = append(body.Jobs, group)
	}
	used, limit, err := hp.budget(ctx, srv.GuildID)
	if err != nil {
		return body, err
	}
	body.Budget = textFor(v, "web.health.budget.unlimited", used)
	if limit > 0 {
		body.Budget = textFor(v, "web.health.budget.value", used, limit)
	}
	runs, err := hp.jobs.TaskRuns(ctx)
	if err != nil {
		return body, err
	}
	for _, run := range runs {
		body.Runs = append(body.Runs, taskRunView{Name: run.Name, Finished: stamp(run.FinishedAt), OK: run.OK,
			Runs: run.Runs, Failures: run.Failures})
	}
	reps, err := hp.doctor.RepairLog(ctx, hp.now().Add(-healthRepairWindow))
	if err != nil {
		return body, err
	}
	for i := len(reps) - 1; i >= 0 && len(body.Repairs) < healthRepairsShown; i-- {
		rep := reps[i]
		body.Repairs = append(body.Repairs, repairView{At: stamp(rep.At), Action: string(rep.Action), Outcome: string(rep.Outcome),
			Found: rep.Found, Changed: rep.Changed})
	}
	return body, nil
}

// requeue gives the server's dead jobs (or the one the form names) one more chance, for a
// manager. A job of another server, or one that is not dead, reads as missing.
func (hp *healthPage) requeue(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := hp.open(w, r, v, needManager)
	if !ok {
		return
	}
	dead, err := hp.jobs.FindJobs(r.Context(), memory.JobFilter{States: []string{memory.JobDead}, GuildID: srv.GuildID, Limit: requeueScan})
	if err != nil {
		hp.view.internal(w, r, v, "couldn't list a server's dead jobs", err)
		return
	}
	if raw := r.PostForm.Get("id"); raw != "" {
		id, ok := parseID(raw)
		var one []*memory.Job
		for _, j := range dead {
			if ok && j.ID == id {
				one = append(one, j)
			}
		}
		if len(one) == 0 {
			hp.view.notFound(w, r, v)
			return
		}
		dead = one
	}
	requeued := 0
	for _, j := range dead {
		err := hp.jobs.Requeue(r.Context(), j.ID)
		switch code := memory.ErrorCode(err); {
		case err == nil:
			requeued++
		case code == memory.ECONFLICT || code == memory.ENOTFOUND:
			// Requeued or purged meanwhile, or its work is already queued: nothing to do.
		default:
			hp.view.internal(w, r, v, "couldn't requeue a dead job", err)
			return
		}
	}
	hp.log.InfoContext(r.Context(), "dead jobs requeued on the web dashboard", "user_id", v.sess.UserID, "guild_id", srv.GuildID,
		"requeued", requeued)
	http.Redirect(w, r, "/servers/"+srv.GuildID+"/health?requeued="+strconv.Itoa(requeued), http.StatusSeeOther)
}

// repair rebuilds the search indexes (`kioku reindex`) for a manager, at most once an hour
// from anywhere, and records it in the audit of repairs as self-repair does.
func (hp *healthPage) repair(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := hp.open(w, r, v, needManager)
	if !ok {
		return
	}
	ctx, back := r.Context(), "/servers/"+srv.GuildID+"/health"
	recent, err := hp.doctor.RepairLog(ctx, hp.now().Add(-repairCooldown))
	if err != nil {
		hp.view.internal(w, r, v, "couldn't read the repair audit", err)
		return
	}
	for _, rep := range recent {
		if rep.Action == maintenance.ActionReindex && rep.Outcome == maintenance.OutcomeExecuted {
			http.Redirect(w, r, back+"?repair=wait", http.StatusSeeOther)
			return
		}
	}
	before, err := hp.doctor.Diagnose(ctx)
	if err != nil {
		hp.view.internal(w, r, v, "couldn't diagnose the store", err)
		return
	}
	rec := maintenance.Repair{At: hp.now(), Action: maintenance.ActionReindex, Outcome: maintenance.OutcomeExecuted,
		Mode: maintenance.ModeExecute, ScoreBefore: maintenance.Assess(before).Score}
	rec.Found = maintenance.Assess(before).Found(maintenance.ActionReindex)
	changed, runErr := hp.repairs.RepairIndexes(ctx)
	rec.Changed = changed
	if runErr != nil {
		rec.Outcome, rec.Error = maintenance.OutcomeFailed, runErr.Error()
	}
	if after, err := hp.doctor.Diagnose(ctx); err == nil {
		rec.ScoreAfter = maintenance.Assess(after).Score
	}
	if err := hp.doctor.RecordRepairs(ctx, []maintenance.Repair{rec}); err != nil {
		hp.log.WarnContext(ctx, "couldn't record a repair made on the web dashboard", "err", err)
	}
	if runErr != nil {
		hp.view.internal(w, r, v, "couldn't repair the search indexes", runErr)
		return
	}
	hp.log.InfoContext(ctx, "search indexes repaired on the web dashboard", "user_id", v.sess.UserID, "guild_id", srv.GuildID,
		"changed", changed)
	http.Redirect(w, r, back+"?repair=done", http.StatusSeeOther)
}
