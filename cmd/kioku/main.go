// Command kioku is a Discord chat bot with long-term memory people can trust, and the
// operator's tool to inspect and manage that memory.
//
// Usage:
//
//	kioku [run]                      run the bot (the default)
//	kioku migrate                    apply database migrations
//	kioku migrate-store --from FILE --to postgres://…  copy SQLite into an empty PostgreSQL database
//	kioku chat [--user U] [--guild G] chat in the terminal on the same turn engine
//	kioku memories list|search|add|forget|recover|history|undo|export|import
//	kioku guilds list|purge ID       servers with data; delete one server's data now
//	kioku jobs list|show|requeue|purge  the background queue; requeue dead jobs
//	kioku reindex [--json]           rebuild search text and full-text indexes from the rows
//	kioku backup PATH                a consistent snapshot of the database, while running
//	kioku doctor                     diagnostics; non-zero exit when unhealthy
//	kioku healthcheck                ask the running bot's /healthz; exit 1 unless it answers 200
//	kioku eval retrieval --dataset FILE [--k 1,5,10] [--json]
//	kioku bench [--memories N] [--dims D] [--queries Q] [--json]
//	kioku version [--json]           the module version and VCS commit of this build
//
// Configuration comes from KIOKU_* environment variables (see `kioku help config`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kioku-bot/kioku/internal/metrics"
	"github.com/kioku-bot/kioku/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv}
	code := app.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// App carries the process's standard streams and environment so end-to-end tests can run
// any subcommand in-process.
type App struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	LookupEnv func(string) (string, bool)

	config Config
	logger *slog.Logger
	// storeOpened, when set, is called with the store a subcommand opened, before its use:
	// end-to-end tests put the database in a fault state through it.
	storeOpened storeHook
	// httpListener, when set, serves health and metrics in place of a listener on
	// KIOKU_HTTP_ADDR: end-to-end tests open it on a free port, so they know the address.
	httpListener net.Listener
	// webListener, when set, serves the web dashboard in place of a listener on
	// KIOKU_WEB_ADDR, for the same reason.
	webListener net.Listener
	// metrics, set by `kioku run` (newMetrics), is the registry the parts wire.go builds
	// report to; nil in every other subcommand, which serves no metrics.
	metrics *metrics.Metrics
}

type command struct {
	name, usage string
	run         func(ctx context.Context, app *App, args []string) error
}

func commands() []command {
	return []command{
		{"run", "run the Discord bot (the default)", runBot},
		{"migrate", "apply pending database migrations", runMigrate},
		{"migrate-store", "copy a SQLite database into an empty PostgreSQL one: --from FILE --to postgres://…", runMigrateStore},
		{"chat", "chat in the terminal on the same turn engine (--user, --guild)", runChat},
		{"memories", "manage memories: list|search|add|forget|recover|history|undo|export|import", runMemories},
		{"guilds", "servers kioku holds data about: list | purge ID [--confirm ID]", runGuilds},
		{"jobs", "the background queue: list|show|requeue|purge", runJobs},
		{"reindex", "rebuild search text and full-text indexes from the rows [--json]", runReindex},
		{"backup", "write a consistent snapshot of the database to PATH (safe while running)", runBackup},
		{"doctor", "check configuration, database and providers", runDoctor},
		{"healthcheck", "exit 0 when the running bot's /healthz answers 200, else 1 (container HEALTHCHECK)", runHealthcheck},
		{"eval", "measure recall: eval retrieval --dataset FILE [--k 1,5,10] [--json]", runEval},
		{"bench", "benchmark writes and recall on a synthetic corpus [--memories N] [--json]", runBench},
		{"version", "print the version and VCS commit of this build [--json]", runVersion},
		{"help", "show this help, or `kioku help config` for settings", runHelp},
	}
}

// errUsage marks a usage error whose message was already printed (the flag package does).
var errUsage = errors.New("usage")

// usageError is a usage mistake with a message to show; the exit code is 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Main runs the subcommand named by args and returns the process exit code.
func (app *App) Main(ctx context.Context, args []string) int {
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		fmt.Fprintf(app.Stderr, "kioku: unknown command %q\n\n", name)
		printHelp(app.Stderr)
		return 2
	}
	// help and version must work even when the configuration is broken: they are what an
	// operator reaches for first.
	if name != "help" && name != "version" {
		cfg, err := LoadConfig(app.LookupEnv)
		if err != nil {
			fmt.Fprintf(app.Stderr, "kioku: %v\n", err)
			return 2
		}
		app.config = cfg
		app.logger = newLogger(app.Stderr, cfg)
	}
	err := cmd.run(ctx, app, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, new(*usageError)):
		fmt.Fprintf(app.Stderr, "kioku %s: %v\n", name, err)
		return 2
	case errors.Is(err, errUnhealthy):
		return 1
	}
	if code := memory.ErrorCode(err); code != memory.EINTERNAL {
		fmt.Fprintf(app.Stderr, "kioku: %s\n", memory.ErrorMessage(err))
	} else {
		fmt.Fprintf(app.Stderr, "kioku: %v\n", err)
	}
	return 1
}

func newLogger(w io.Writer, cfg Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runHelp(_ context.Context, app *App, args []string) error {
	if len(args) > 0 && args[0] == "config" {
		fmt.Fprintln(app.Stdout, "Settings (environment variables; KIOKU_CONFIG may name a KEY=VALUE file, the environment wins):")
		defaultOf := func(s setting) string {
			if s.def == "" {
				return "(empty)"
			}
			return s.def
		}
		nameWidth, defWidth := 0, 0
		for _, s := range settings {
			nameWidth, defWidth = max(nameWidth, len(s.name)), max(defWidth, len(defaultOf(s)))
		}
		for _, s := range settings {
			fmt.Fprintf(app.Stdout, "  %-*s  default %-*s  %s\n", nameWidth, s.name, defWidth, defaultOf(s), s.doc)
		}
		return nil
	}
	printHelp(app.Stdout)
	return nil
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "kioku — a Discord chat bot with memory you can trust\n\nCommands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.usage)
	}
}

// newFlagSet returns a flag set that reports errors to the app's stderr instead of exiting.
func newFlagSet(app *App, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("kioku "+name, flag.ContinueOnError)
	fs.SetOutput(app.Stderr)
	return fs
}

// parseInterspersed parses flags that may appear before, between or after positional
// arguments ("kioku memories search tea --guild 1"), returning the positionals.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
