package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/ltm/sqlite"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
)

// errUnhealthy makes `kioku doctor` exit 1 after printing its report.
var errUnhealthy = errors.New("unhealthy")

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
}

// runDoctor is `kioku doctor` (SPEC §7): configuration, the database (opened read-only:
// a mistyped KIOKU_DB creates nothing and a database behind on migrations is reported, not
// migrated), the pipeline, the model endpoint and the health score with its findings. It
// exits 1 when a check fails or the score is unhealthy.
func runDoctor(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "doctor")
	asJSON := fs.Bool("json", false, "print JSON")
	offline := fs.Bool("offline", false, "skip the LLM endpoint check")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	checks := []check{{"config", "ok", "settings parsed"}}
	if app.config.DiscordToken == "" {
		checks = append(checks, check{"discord", "warn", "KIOKU_DISCORD_TOKEN is not set; `kioku run` needs it"})
	} else {
		checks = append(checks, check{"discord", "ok", "token set, API " + app.config.DiscordAPIURL})
	}
	if app.config.WebAddr != "" {
		checks = append(checks, webCheck(app.config))
	}
	storeChecks, diag := app.checkStore(ctx)
	checks = append(checks, storeChecks...)
	if *offline {
		checks = append(checks, check{"llm", "warn", "skipped (--offline)"})
	} else {
		checks = append(checks, app.checkLLM(ctx))
	}
	if app.config.EmbedModel == "" {
		// A supported way to run (SPEC §5), so not a warning that would sound on every
		// run; but the line says plainly what it costs.
		checks = append(checks, check{"recall", "ok", "keyword-only recall: KIOKU_EMBED_MODEL is empty, so memories are found by their words alone, not by meaning; set it to an embedding model for hybrid recall"})
	} else {
		checks = append(checks, app.checkHybridRecall(ctx, *offline))
	}
	// Without diagnostics (no database, or they failed) there is no score: unhealthy.
	report := maintenance.Report{Status: maintenance.StatusUnhealthy}
	if diag != nil {
		report = maintenance.Assess(*diag)
	}
	// One verdict: a failed check makes the whole report unhealthy, whatever the store's
	// score says.
	var failed []string
	for _, c := range checks {
		if c.Status == "fail" && !slices.Contains(failed, c.Name) {
			failed = append(failed, c.Name)
		}
	}
	healthy := report.Status != maintenance.StatusUnhealthy && len(failed) == 0
	if *asJSON {
		h := newHealthJSON(report, diag)
		status := h.Status
		if len(failed) > 0 {
			status = maintenance.StatusUnhealthy
		}
		if err := writeJSON(app.Stdout, map[string]any{"healthy": healthy, "store": app.storeKind(), "status": status, "score": h.Score,
			"failed": nonNil(failed), "domains": h.Domains, "findings": h.Findings, "diagnostics": h.Diagnostics, "checks": checks}); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintf(app.Stdout, "%-4s  %-10s %s\n", c.Status, c.Name, c.Detail)
		}
		writeVerdict(app.Stdout, diag, report, failed)
	}
	if !healthy {
		return errUnhealthy
	}
	return nil
}

// webCheck reports the web dashboard's settings (LoadConfig checked them together): where
// it listens, its public address and the redirect URI to register with Discord. The client
// secret is said to be set, never shown.
func webCheck(cfg Config) check {
	return check{"web", "ok", fmt.Sprintf("dashboard on %s at %s; register %s/auth/callback as a redirect URI of OAuth2 client %s (client secret set)",
		cfg.WebAddr, cfg.WebURL, cfg.WebURL, cfg.DiscordClientID)}
}

// checkStore opens the database read-only and reports it, the pipeline as the database
// records it, and the health diagnostics (nil when they could not be read).
func (app *App) checkStore(ctx context.Context) ([]check, *maintenance.Diagnostics) {
	if app.storeKind() == kindPostgres {
		return app.checkPostgres(ctx)
	}
	store, schema, err := sqlite.OpenReadOnly(ctx, app.config.DB)
	if errors.Is(err, sqlite.ErrNoDatabase) {
		return []check{{"database", "fail", fmt.Sprintf("no database at %s; check KIOKU_DB", app.config.DB)}}, nil
	}
	if err != nil {
		return []check{{"database", "fail", err.Error()}}, nil
	}
	defer store.Close()
	st, err := store.Health.Stats(ctx, "")
	if err != nil {
		return []check{{"database", "fail", err.Error()}}, nil
	}
	out := []check{{"database", "ok", fmt.Sprintf("%s: %d migrations, %.1f MB, %d memories (%d forgotten), %d transcript turns",
		app.config.DB, st.Migrations, float64(st.DBBytes)/1e6, st.Memories, st.Forgotten, st.Turns)}}
	if !st.IntegrityOK {
		out[0] = check{"database", "fail", "integrity check: " + st.IntegrityErr}
	}
	if n := len(schema.Pending); n > 0 {
		out = append(out, check{"database", "warn", fmt.Sprintf("%d migrations behind this kioku (%s), left as it is; `kioku migrate` applies them, and `kioku run` does at start",
			n, strings.Join(schema.Pending, ", "))})
	}
	return app.checkContents(ctx, sqliteBackend(store, app.config.DB), out)
}

// checkPostgres opens the PostgreSQL store as the bot does (which applies pending
// migrations, under the store's lock) and reports it, its connection pool, and what
// checkContents reads. A database without kioku's tables is reported, not given them: a
// KIOKU_DB pointing at another application's database must not change it.
func (app *App) checkPostgres(ctx context.Context) ([]check, *maintenance.Diagnostics) {
	if err := hasKiokuSchema(ctx, app.config.DB); err != nil {
		return []check{{"database", "fail", err.Error()}}, nil
	}
	store, err := app.openStore(ctx)
	if err != nil {
		return []check{{"database", "fail", err.Error()}}, nil
	}
	defer store.Close()
	st, err := store.Health.Stats(ctx, "")
	if err != nil {
		return []check{{"database", "fail", err.Error()}}, nil
	}
	out := []check{{"database", "ok", fmt.Sprintf("PostgreSQL %s: %d migrations, %.1f MB in kioku's tables, %d memories (%d forgotten), %d transcript turns",
		store.where, st.Migrations, float64(st.DBBytes)/1e6, st.Memories, st.Forgotten, st.Turns)}}
	if !st.IntegrityOK {
		out[0] = check{"database", "fail", st.IntegrityErr}
	}
	p := store.pool()
	out = append(out, check{"pool", "ok", fmt.Sprintf("%d of at most %d connections open (%d in use, %d idle); %d acquired by this check",
		p.Total, p.Max, p.InUse, p.Idle, p.Acquires)})
	return app.checkContents(ctx, store, out)
}

// checkContents adds to out what doctor reads in any store: embeddings, the pipeline and
// the health diagnostics (nil when they could not be read).
func (app *App) checkContents(ctx context.Context, store *backend, out []check) ([]check, *maintenance.Diagnostics) {
	out = append(out, embeddingsCheck(ctx, store, app.config.EmbedModel)...)
	out = append(out, pipelineChecks(ctx, store, app.config.PipelineMode)...)
	out = append(out, reviewCheck(ctx, store))
	diag, err := store.Health.DiagnoseModel(ctx, app.config.EmbedModel)
	if err != nil {
		return append(out, check{"health", "fail", err.Error()}), nil
	}
	return out, &diag
}

// pipelineChecks reports the background pipeline as the database records it: queue depth,
// dead jobs and the last run of each task in one line, then one warning line per problem
// (dead jobs, expired leases, failed runs, a due job nobody works on). Doctor runs in its
// own process, so the running bot's model budget is not known here.
func pipelineChecks(ctx context.Context, store *backend, mode memory.PipelineMode) []check {
	st, err := pipeline.ReadStatus(ctx, store.Jobs, store.Now())
	if err != nil {
		return []check{{"pipeline", "fail", err.Error()}}
	}
	summary := st.Summary()
	if len(st.Runs) == 0 {
		summary += "; no task has run yet (the pipeline runs inside `kioku run` and `kioku chat`)"
	}
	if mode != "" {
		summary = "mode " + string(mode) + ": " + summary
	}
	out := []check{{"pipeline", "ok", summary}}
	for _, p := range st.Problems() {
		out = append(out, check{"pipeline", "warn", p})
	}
	return out
}

// reviewCheck counts what waits for a person in every scope (`kioku memories review` lists
// one scope's). Waiting is no fault: the line is ok, and says how to look. A database behind
// its migrations may not have the queue yet, which the database line reports.
func reviewCheck(ctx context.Context, store *backend) check {
	n, err := store.Review.Waiting(ctx)
	if err != nil {
		return check{"review", "warn", "couldn't count what waits for review: " + err.Error()}
	}
	if n == 0 {
		return check{"review", "ok", "nothing waits for review"}
	}
	return check{"review", "ok", fmt.Sprintf("%d waiting for review (disputed memories, flagged pairs, proposals): kioku memories review --guild ID, or /memory review", n)}
}

// checkLLM lists the endpoint's models: cheap, supported by every OpenAI-compatible server
// we know of, and it proves the URL and key are right.
func (app *App) checkLLM(ctx context.Context) check {
	cfg := openai.DefaultConfig(app.config.LLMAPIKey)
	cfg.BaseURL = app.config.LLMBaseURL
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	models, err := openai.NewClientWithConfig(cfg).ListModels(ctx)
	if err != nil {
		return check{"llm", "fail", fmt.Sprintf("%s unreachable: %v; check KIOKU_LLM_BASE_URL and KIOKU_LLM_API_KEY (`kioku doctor --offline` skips this check)",
			app.config.LLMBaseURL, err)}
	}
	served := make(map[string]bool, len(models.Models))
	for _, m := range models.Models {
		served[m.ID] = true
	}
	// The pipeline's model runs in the background, where a wrong name shows only as dead
	// jobs; say so here, where the operator is looking.
	want := []string{app.config.ChatModel}
	if pm := app.config.PipelineModel; pm != "" && pm != app.config.ChatModel {
		want = append(want, pm)
	}
	var missing []string
	for _, m := range want {
		if !served[m] {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return check{"llm", "warn", fmt.Sprintf("%s answered but does not list %s (%d models)", app.config.LLMBaseURL, strings.Join(missing, ", "), len(models.Models))}
	}
	return check{"llm", "ok", fmt.Sprintf("%s serves %s", app.config.LLMBaseURL, strings.Join(want, ", "))}
}

// hasKiokuSchema fails unless the PostgreSQL database at url holds kioku's tables in the
// schema its search path names.
func hasKiokuSchema(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("couldn't reach PostgreSQL at %s: %w", redactURL(url), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('memories') IS NOT NULL`).Scan(&ok); err != nil {
		return fmt.Errorf("couldn't read the schema of %s: %w", redactURL(url), err)
	}
	if !ok {
		return fmt.Errorf("no kioku database at %s: its schema has no kioku tables; check KIOKU_DB, or create them with `kioku migrate`", redactURL(url))
	}
	return nil
}
