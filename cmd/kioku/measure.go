package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/internal/bench"
	"github.com/kioku-bot/kioku/internal/eval"
)

// runEval is `kioku eval retrieval --dataset FILE [--k 1,5,10] [--json]` (SPEC §8). With
// KIOKU_EMBED_MODEL set the eval measures hybrid recall through the configured provider;
// otherwise (and with --keyword-only) it measures the keyword recall the bot uses without one.
func runEval(ctx context.Context, app *App, args []string) error {
	if len(args) == 0 || args[0] != "retrieval" {
		return usagef("usage: kioku eval retrieval --dataset FILE [--k 1,5,10] [--json] [--keyword-only] [--misses]")
	}
	fs := newFlagSet(app, "eval retrieval")
	dataset := fs.String("dataset", "", "dataset file (JSON, SPEC §8)")
	ks := fs.String("k", "1,5,10", "comma-separated recall@k cut-offs")
	asJSON := fs.Bool("json", false, "print one JSON object")
	keywordOnly := fs.Bool("keyword-only", false, "ignore KIOKU_EMBED_MODEL and measure keyword recall")
	misses := fs.Bool("misses", false, "also list the queries with nothing relevant in their top 10")
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *dataset == "" {
		return usagef("--dataset is required")
	}
	cut, err := parseCutoffs(*ks)
	if err != nil {
		return err
	}
	opt := eval.Options{Dataset: *dataset, K: cut}
	if app.config.EmbedModel != "" && !*keywordOnly {
		model, err := app.newModelClient()
		if err != nil {
			return err
		}
		opt.Embed, opt.EmbedModel = model.Embed, app.config.EmbedModel
	}
	rep, err := eval.Run(ctx, opt)
	if err != nil {
		return err
	}
	if err := rep.WriteSkipped(app.Stderr); err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(app.Stdout)
	}
	if err := rep.WriteText(app.Stdout); err != nil {
		return err
	}
	if *misses {
		fmt.Fprintf(app.Stdout, "\n%d queries with nothing relevant in the top 10:\n", len(rep.Misses))
		for _, m := range rep.Misses {
			fmt.Fprintf(app.Stdout, "  %s %s [%s] %s\n", m.Scope, m.QueryID, m.Category, m.Text)
		}
	}
	return nil
}

func parseCutoffs(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 || k > 100 {
			return nil, usagef("--k wants whole numbers from 1 to 100, got %q", part)
		}
		out = append(out, k)
	}
	return out, nil
}

// runBench is `kioku bench [--memories N] [--dims D] [--queries Q] [--scopes N] [--turns N]
// [--cpuprofile FILE] [--memprofile FILE] [--keep DIR] [--json]` (SPEC §8): a seeded synthetic corpus through the real write
// path and the real recall, with the brute-force and plain-FTS baselines measured in the
// same run. It needs no network.
func runBench(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "bench")
	n := fs.Int("memories", bench.DefaultMemories, "memories in the corpus")
	dims := fs.Int("dims", bench.DefaultDims, "embedding dimensions")
	queries := fs.Int("queries", bench.DefaultQueries, "queries to time")
	seed := fs.Uint64("seed", bench.DefaultSeed, "corpus seed (the same seed gives the same corpus)")
	scopes := fs.Int("scopes", 1, "guilds to spread the corpus over (one hot guild with 1/11 of it, the rest smaller, some personal memory)")
	turns := fs.Int("turns", 0, "whole chat turns to time with an in-process model that answers at once")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed queries to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile of the restarted process, every scope asked, to this file")
	keep := fs.String("keep", "", "keep the databases in this directory, and reuse them when it holds the same corpus (no load, no write rates)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	store := fs.String("store", "sqlite", "sqlite: the full benchmark; postgres: SQLite and PostgreSQL side by side on one corpus")
	pgURL := fs.String("postgres", "", "with --store postgres: the PostgreSQL database (a fresh schema is created and dropped); default KIOKU_DB when it is one")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	switch *store {
	case kindSQLite:
	case kindPostgres:
		memoriesSet := false
		fs.Visit(func(f *flag.Flag) { memoriesSet = memoriesSet || f.Name == "memories" })
		if !memoriesSet {
			*n = bench.DefaultStoreMemories
		}
		return benchStores(ctx, app, *pgURL, bench.Options{Memories: *n, Dims: *dims, Queries: *queries, Seed: *seed, Progress: app.Stderr}, *asJSON)
	default:
		return usagef("--store is sqlite or postgres, got %q", *store)
	}
	opt := bench.Options{Memories: *n, Dims: *dims, Queries: *queries, Seed: *seed, Scopes: *scopes, Turns: *turns, Keep: *keep, Progress: app.Stderr}
	if err := checkBenchSizes(opt); err != nil {
		return err
	}
	closeProfiles, err := openProfiles(&opt, *cpuProfile, *memProfile)
	if err != nil {
		return err
	}
	defer closeProfiles()
	// The bench measures a fresh bot process's memory under the limit a bot sets. The load
	// holds the whole corpus, so the watcher raises the limit past it; the restart that
	// stands for a fresh process starts over from the bot's limit.
	stopLimit := startMemoryLimit(ctx, app.config, 5*time.Second, app.logger)
	opt.Restarted = func() {
		stopLimit()
		stopLimit = startMemoryLimit(ctx, app.config, 5*time.Second, app.logger)
	}
	defer func() { stopLimit() }()
	rep, err := bench.Run(ctx, opt)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("bench interrupted")
		}
		return err
	}
	if *asJSON {
		return rep.WriteJSON(app.Stdout)
	}
	return rep.WriteText(app.Stdout)
}

// checkBenchSizes refuses sizes the benchmark cannot run with, naming the flag.
func checkBenchSizes(opt bench.Options) error {
	for name, v := range map[string]int{"--memories": opt.Memories, "--dims": opt.Dims, "--queries": opt.Queries, "--scopes": opt.Scopes} {
		if v < 1 {
			return usagef("%s must be at least 1, got %d", name, v)
		}
	}
	if opt.Memories < 4 {
		return usagef("--memories must be at least 4, got %d", opt.Memories)
	}
	if opt.Turns < 0 {
		return usagef("--turns must be at least 0, got %d", opt.Turns)
	}
	if opt.Scopes > 1 && opt.Memories < 20*opt.Scopes {
		return usagef("--memories must be at least 20 per scope (%d for --scopes %d), got %d", 20*opt.Scopes, opt.Scopes, opt.Memories)
	}
	return nil
}

// openProfiles creates the CPU and heap profile files named (empty: none) and sets them in
// opt; the returned func closes what was opened.
func openProfiles(opt *bench.Options, cpuProfile, memProfile string) (closeAll func(), err error) {
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return func() {}, fmt.Errorf("couldn't create CPU profile: %w", err)
		}
		files = append(files, f)
		opt.CPUProfile = f
	}
	if memProfile != "" {
		f, err := os.Create(memProfile)
		if err != nil {
			closeAll()
			return func() {}, fmt.Errorf("couldn't create heap profile: %w", err)
		}
		files = append(files, f)
		opt.MemProfile = f
	}
	return closeAll, nil
}

// benchStores is `kioku bench --store postgres`: SQLite and PostgreSQL side by side, the
// same corpus written one memory at a time and the same queries timed on each, keyword-only
// and hybrid.
func benchStores(ctx context.Context, app *App, pgURL string, opt bench.Options, asJSON bool) error {
	if pgURL == "" && isPostgresURL(app.config.DB) {
		pgURL = app.config.DB
	}
	if !isPostgresURL(pgURL) {
		return usagef("--store postgres needs a database: --postgres postgres://… (or KIOKU_DB set to one)")
	}
	if opt.Memories < 4 || opt.Queries < 1 || opt.Dims < 1 {
		return usagef("--memories must be at least 4, --queries and --dims at least 1")
	}
	cfg, err := pgxpool.ParseConfig(pgURL)
	if err != nil {
		return fmt.Errorf("invalid --postgres: %w", err)
	}
	rep, err := bench.CompareStores(ctx, opt, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("bench interrupted")
		}
		return err
	}
	if asJSON {
		return rep.WriteJSON(app.Stdout)
	}
	return rep.WriteText(app.Stdout)
}
