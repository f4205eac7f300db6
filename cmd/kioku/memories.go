package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kioku-bot/kioku/memory"
)

// scopeFlags are the --guild / --user flags every memories subcommand takes.
type scopeFlags struct {
	guild, user string
	asJSON      bool
}

func (sf *scopeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.guild, "guild", "", "server scope: the guild id")
	fs.StringVar(&sf.user, "user", "", "personal scope: the user id")
	fs.BoolVar(&sf.asJSON, "json", false, "print JSON")
}

func (sf *scopeFlags) owner() (memory.Owner, error) {
	switch {
	case sf.guild != "" && sf.user != "":
		return memory.Owner{}, usagef("give --guild or --user, not both")
	case sf.guild != "":
		return memory.ServerOwner(sf.guild), nil
	case sf.user != "":
		return memory.PersonalOwner(sf.user), nil
	}
	return memory.Owner{}, usagef("give --guild ID (server memory) or --user ID (personal memory)")
}

const memoriesUsage = `usage: kioku memories <command> (--guild ID | --user ID) [flags]
  list     [--type T] [--limit N] [--offset N] [--deleted] [--when upcoming|past]
           [--lifecycle active|past|superseded|disputed|archived]
  show     ID                   one memory in full, with its lifecycle and the day it is about
  search   QUERY [--limit N] [--type T] [--tag a,b] [--since D] [--until D] [--pinned]
           [--author ID] [--min-score X] [--include superseded,archived] [--explain]
                                D: 2025-06-01, RFC 3339, or an age (7d, 2w, 12h)
  add      TEXT [--type T] [--tags a,b] [--importance X] [--pinned] [--force]
                                saves nothing and prints "similar to #N" when a memory of the
                                scope says the same in other words; --force saves it anyway
  forget   ID... | --query Q [--confirm TOKEN]
  recover  ID
  history  ID
  undo     ID [--version V]     revert the memory's last change (V: the version it made)
  export   [--out FILE]
  import   FILE
  graph    [--entity NAME] [--limit N]   the scope's top entities, or one entity's neighbourhood
  review   [--limit N] | --settle REF --choice keep|replace|merge|forget [--text T]
                                what waits for review (disputed and similar pairs, proposals)
every command takes --json`

func runMemories(ctx context.Context, app *App, args []string) error {
	return runStoreCommand(ctx, app, "memories", memoriesUsage, args, map[string]storeCommand{
		"list": memList, "show": memShow, "search": memSearch, "add": memAdd, "forget": memForget,
		"recover": memRecover, "history": memHistory, "undo": memUndo, "export": memExport, "import": memImport,
		"graph": memGraph, "review": memReview,
	})
}

// storeCommand is one subcommand of a command group that works on the database.
type storeCommand func(ctx context.Context, app *App, store *backend, args []string) error

// runStoreCommand dispatches `kioku GROUP SUB args…` to handlers[SUB] with the database open,
// and prints usage for a missing or unknown SUB.
func runStoreCommand(ctx context.Context, app *App, group, usage string, args []string, handlers map[string]storeCommand) error {
	if len(args) == 0 {
		fmt.Fprintln(app.Stderr, usage)
		return errUsage
	}
	sub, args := args[0], args[1:]
	h, ok := handlers[sub]
	if !ok {
		fmt.Fprintf(app.Stderr, "kioku %s: unknown command %q\n%s\n", group, sub, usage)
		return errUsage
	}
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	return h(ctx, app, store, args)
}

func memList(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories list")
	var sf scopeFlags
	sf.register(fs)
	typ := fs.String("type", "", "only this memory type")
	limit := fs.Int("limit", 20, "page size")
	offset := fs.Int("offset", 0, "skip this many")
	deleted := fs.Bool("deleted", false, "list forgotten (recoverable) memories")
	when := fs.String("when", "", "only plans and events still to come (upcoming, soonest first) or gone by (past)")
	lifecycle := fs.String("lifecycle", "", "only memories in this lifecycle: "+lifecycleNames()+" (default: all but superseded and archived)")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if t := memory.Timing(*when); t != "" && !t.Valid() {
		return usagef("--when takes upcoming or past, not %q", *when)
	}
	if l := memory.Lifecycle(*lifecycle); l != "" && !l.Valid() {
		return usagef("--lifecycle takes %s, not %q", lifecycleNames(), *lifecycle)
	}
	mems, total, err := store.Memories.List(ctx, owner, memory.ListOptions{Limit: *limit, Offset: *offset, Type: memory.Type(*typ),
		Deleted: *deleted, Timing: memory.Timing(*when), Lifecycle: memory.Lifecycle(*lifecycle), Now: store.Now()})
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, map[string]any{"total": total, "memories": nonNil(mems)})
	}
	printMemories(app.Stdout, mems)
	fmt.Fprintf(app.Stdout, "%d of %d\n", len(mems), total)
	return nil
}

func memSearch(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories search")
	var sf scopeFlags
	sf.register(fs)
	limit := fs.Int("limit", 10, "results")
	explain := fs.Bool("explain", false, "show per result its keyword and vector scores and each ranking stage that moved it")
	var ff searchFilterFlags
	ff.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("kioku memories search QUERY")
	}
	q := memory.SearchQuery{Text: strings.Join(pos, " "), Owners: []memory.Owner{owner}, Limit: *limit, MatchesOnly: true,
		Explain: *explain}
	if err := ff.apply(&q, store.Now()); err != nil {
		return err
	}
	results, err := store.Recall.Search(ctx, q)
	if err != nil {
		return err
	}
	now := store.Now()
	if sf.asJSON {
		type hit struct {
			Score   float64         `json:"score"`
			Keyword *float64        `json:"keyword,omitempty"`
			Vector  *float64        `json:"vector,omitempty"`
			Why     []memory.Factor `json:"why,omitempty"`
			// Lifecycle is explained too: past ranks lower for questions about now, and a
			// superseded or archived memory is here only because --include asked for it.
			Lifecycle memory.Lifecycle `json:"lifecycle,omitempty"`
			Memory    *memory.Memory   `json:"memory"`
		}
		out := make([]hit, len(results))
		for i, r := range results {
			out[i] = hit{Score: r.Score, Memory: r.Memory}
			if *explain {
				out[i].Keyword, out[i].Vector, out[i].Why = &r.Keyword, &r.Vector, nonNil(r.Why)
				out[i].Lifecycle = r.Memory.LifecycleAt(now)
			}
		}
		return writeJSON(app.Stdout, out)
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCORE\tTYPE\tCONTENT")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\n", r.Memory.ID, r.Score, r.Memory.Type, oneLine(r.Memory.Content))
		if *explain {
			fmt.Fprintf(tw, "\t\t\t%s\n", explainLine(r, now))
		}
	}
	return tw.Flush()
}

func memForget(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories forget")
	var sf scopeFlags
	sf.register(fs)
	query := fs.String("query", "", "forget the memories matching this text (previews first)")
	confirm := fs.String("confirm", "", "execute a preview: the token it printed")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	var forgotten []*memory.Memory
	switch {
	case *confirm != "":
		if forgotten, err = store.Confirmations.ConfirmForget(ctx, owner, *confirm, memory.ActorCLI); err != nil {
			return err
		}
	case *query != "":
		preview, err := store.Confirmations.PreviewForget(ctx, owner, *query, memory.ActorCLI, 0)
		if err != nil {
			return err
		}
		if sf.asJSON {
			return writeJSON(app.Stdout, map[string]any{"token": preview.Token, "expires_at": preview.ExpiresAt, "matches": preview.Matches})
		}
		printMemories(app.Stdout, preview.Matches)
		these := "this memory"
		if n := len(preview.Matches); n != 1 {
			these = fmt.Sprintf("these %d memories", n)
		}
		fmt.Fprintf(app.Stdout, "Nothing is forgotten yet. To forget %s, run before %s:\n  kioku memories forget %s --confirm %s\n",
			these, preview.ExpiresAt.Local().Format(clockFormat), scopeArgs(owner), preview.Token)
		return nil
	default:
		ids, err := parseIDs(pos)
		if err != nil {
			return err
		}
		if forgotten, err = store.Memories.Forget(ctx, owner, ids, memory.ActorCLI, "cli"); err != nil {
			return err
		}
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, map[string]any{"forgotten": nonNil(forgotten)})
	}
	for _, m := range forgotten {
		fmt.Fprintf(app.Stdout, "forgot #%d (recoverable for %d days)\n", m.ID, int(store.RecoverWindow.Hours()/24))
	}
	return nil
}

func memRecover(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories recover")
	var sf scopeFlags
	sf.register(fs)
	owner, id, err := oneMemory(fs, &sf, args, "kioku memories recover ID")
	if err != nil {
		return err
	}
	m, err := store.Memories.Recover(ctx, owner, id, 0, memory.ActorCLI)
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, m)
	}
	fmt.Fprintf(app.Stdout, "recovered #%d: %s\n", m.ID, oneLine(m.Content))
	return nil
}

// oneMemory parses the arguments of a command that names one memory by ID in a scope, after
// the command's own flags are registered on fs; usage is the line a mistake prints.
func oneMemory(fs *flag.FlagSet, sf *scopeFlags, args []string, usage string) (memory.Owner, int64, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return memory.Owner{}, 0, err
	}
	owner, err := sf.owner()
	if err != nil {
		return memory.Owner{}, 0, err
	}
	ids, err := parseIDs(pos)
	if err != nil || len(ids) != 1 {
		return memory.Owner{}, 0, usagef("%s", usage)
	}
	return owner, ids[0], nil
}

func memHistory(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories history")
	var sf scopeFlags
	sf.register(fs)
	owner, id, err := oneMemory(fs, &sf, args, "kioku memories history ID")
	if err != nil {
		return err
	}
	events, err := store.Memories.History(ctx, owner, id)
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, events)
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tACTION\tV\tACTOR\tCONTENT")
	for _, e := range events {
		content := e.NewContent
		if content == "" {
			content = e.OldContent
		}
		if from, to, ref, ok := e.StateChange(); ok && e.OldContent == e.NewContent {
			content = fmt.Sprintf("lifecycle %s → %s", from.Lifecycle(), to.Lifecycle())
			if ref != 0 {
				content += fmt.Sprintf(" (#%d)", ref)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.CreatedAt.Local().Format("2006-01-02 15:04"), e.Action, e.Version, e.Actor, oneLine(content))
	}
	return tw.Flush()
}

// memUndo reverts the last change of a memory: a forget is recovered, an edit restored,
// a creation forgotten. --version makes sure it is the change the operator has in mind.
func memUndo(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories undo")
	var sf scopeFlags
	sf.register(fs)
	version := fs.Int("version", 0, "undo only if the memory is still at this version (the one the change made)")
	owner, id, err := oneMemory(fs, &sf, args, "kioku memories undo ID (--guild ID | --user ID) [--version V]")
	if err != nil {
		return err
	}
	if *version < 0 {
		return usagef("--version %d: versions start at 1", *version)
	}
	res, err := store.Memories.Undo(ctx, owner, id, *version, memory.ActorCLI)
	if errors.Is(err, memory.ErrChangedSince) {
		return memory.Errorf(memory.ECONFLICT, "Memory #%d changed since; see kioku memories history %d %s.", id, id, scopeArgs(owner))
	}
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, res)
	}
	m := res.Memory
	switch res.Action {
	case memory.ActionRecover:
		fmt.Fprintf(app.Stdout, "undid the forget of #%d (change %d): recovered, now version %d: %s\n", m.ID, res.Change.ID, m.Version, oneLine(m.Content))
	case memory.ActionDelete:
		fmt.Fprintf(app.Stdout, "undid the %s of #%d (change %d): forgotten (recoverable for %d days)\n", res.Change.Action, m.ID, res.Change.ID,
			int(store.RecoverWindow.Hours()/24))
	default:
		fmt.Fprintf(app.Stdout, "undid the edit of #%d (change %d): now version %d: %s\n", m.ID, res.Change.ID, m.Version, oneLine(m.Content))
	}
	return nil
}

func memExport(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories export")
	var sf scopeFlags
	sf.register(fs)
	out := fs.String("out", "", "write to this file instead of standard output")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	f, err := store.Transfer.Export(ctx, owner)
	if err != nil {
		return err
	}
	if *out == "" {
		return writeJSON(app.Stdout, f)
	}
	file, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("couldn't create %s: %w", *out, err)
	}
	if err := writeJSON(file, f); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("couldn't write %s: %w", *out, err)
	}
	fmt.Fprintf(app.Stderr, "exported %d memories to %s\n", len(f.Memories), *out)
	return nil
}

func memImport(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories import")
	var sf scopeFlags
	sf.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("kioku memories import FILE (- for standard input)")
	}
	f, err := readImportFile(app, pos[0])
	if err != nil {
		return err
	}
	res, err := store.Transfer.Import(ctx, owner, f, memory.ActorCLI)
	if err != nil {
		return err
	}
	if sf.asJSON {
		return writeJSON(app.Stdout, map[string]any{"created": res.Created, "duplicates": res.Duplicates, "similar": res.Similar})
	}
	fmt.Fprintf(app.Stdout, "imported %d memories (%d already present)\n", res.Created, res.Duplicates)
	if res.Similar > 0 {
		fmt.Fprintf(app.Stdout, "%d say again in other words what a memory already said: kioku memories review lists them\n", res.Similar)
	}
	return nil
}

func parseIDs(args []string) ([]int64, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one memory id")
	}
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		for _, part := range strings.Split(a, ",") {
			id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(part), "#"), 10, 64)
			if err != nil || id <= 0 {
				return nil, usagef("%q is not a memory id", part)
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func printMemories(w io.Writer, mems []*memory.Memory) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTYPE\tPIN\tCREATED\tCONTENT")
	for _, m := range mems {
		pin := ""
		if m.Pinned {
			pin = "📌"
		}
		content := oneLine(m.Content)
		if !m.RefersTo.IsZero() {
			// A time-bound memory says which day it is about, on the operator's calendar.
			content = "[about " + m.RefersTo.Local().Format("Mon 2006-01-02") + "] " + content
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", m.ID, m.Type, pin, m.CreatedAt.Local().Format("2006-01-02"), content)
	}
	tw.Flush()
}

// clockFormat is how a deadline within the day is shown: a 24-hour time with its zone,
// which reads the same everywhere and says which clock it is on.
const clockFormat = "15:04 MST"

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

func scopeArgs(o memory.Owner) string {
	if o.Scope == memory.ScopePersonal {
		return "--user " + o.UserID
	}
	return "--guild " + o.GuildID
}

func typeNames() string {
	names := make([]string, len(memory.Types))
	for i, t := range memory.Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
