package main

// The memory views of `kioku chat`: /list, /search, /show, /forget, /undo and /history,
// the /memory commands people use most, through the same store calls and scope rules as
// the Discord commands. The terminal user is one member: in a DM their personal memory is
// the only scope; in a guild (--guild) the server's memory is the default and
// scope:personal picks theirs. The terminal reads every channel, so nothing is
// channel-restricted (a nil audience), and, as for the chat turns, the operator at the
// terminal may edit server memory.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/memory"
)

// terminalPageSize is how many memories /list shows at once, as /memory list does.
const terminalPageSize = 10

// terminalHelp lists the REPL's commands.
const terminalHelp = `Commands (anything else is a message to kioku):
  /list [type:T] [tag:X] [page:N]   memories, newest first, ten a page
  /search WORDS [type:T] [tag:X]    the best matches for some words
  /show ID                          one memory in full, with its latest changes
  /forget ID                        forget one memory (recoverable for 30 days)
  /forget WORDS                     show the matches; /forget confirm then forgets them
  /undo ID [version:V]              revert the last change to a memory
  /history ID                       every change made to a memory
  /help, /quit
Each takes scope:personal or scope:server in a guild (--guild); in a DM your personal memory is the only scope.`

// terminalCommands answers the REPL's "/" lines for the member of req.
type terminalCommands struct {
	store *backend
	req   chat.Request
	// pending is the last forget-by-words preview, which /forget confirm carries out.
	pending *pendingForget
}

// pendingForget is a forget preview waiting for its confirmation.
type pendingForget struct {
	owner memory.Owner
	token string
	count int
}

func newTerminalCommands(store *backend, req chat.Request) *terminalCommands {
	return &terminalCommands{store: store, req: req}
}

// terminalArgs are a command line's words and key:value options.
type terminalArgs struct {
	words []string
	opts  map[string]string
}

// parseTerminalArgs splits the words after the command; type:, tag:, page:, scope: and
// version: are options, everything else words.
func parseTerminalArgs(fields []string) terminalArgs {
	a := terminalArgs{opts: map[string]string{}}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, ":"); ok && v != "" {
			switch k {
			case "type", "tag", "page", "scope", "version":
				a.opts[k] = v
				continue
			}
		}
		a.words = append(a.words, f)
	}
	return a
}

// run answers one "/" line on out; errors are shown as the Discord commands show them.
func (t *terminalCommands) run(ctx context.Context, line string, out io.Writer) {
	fields := strings.Fields(line)
	name, args := strings.TrimPrefix(fields[0], "/"), parseTerminalArgs(fields[1:])
	handlers := map[string]func(context.Context, terminalArgs, io.Writer) error{
		"list": t.list, "search": t.search, "show": t.show, "forget": t.forget, "undo": t.undo, "history": t.history,
	}
	if name == "help" {
		fmt.Fprintln(out, terminalHelp)
		return
	}
	h, ok := handlers[name]
	if !ok {
		fmt.Fprintf(out, "There is no command /%s; /help lists them (a message can't start with /).\n", name)
		return
	}
	if err := h(ctx, args, out); err != nil {
		fmt.Fprintf(out, "[error] %s\n", memory.ErrorMessage(err))
	}
}

// owner is the scope a command works on, by the rule of the Discord commands: a DM has only
// the member's personal memory; a guild defaults to its server memory.
func (t *terminalCommands) owner(a terminalArgs) (memory.Owner, error) {
	switch scope := a.opts["scope"]; {
	case scope != "" && scope != string(memory.ScopeServer) && scope != string(memory.ScopePersonal):
		return memory.Owner{}, memory.Errorf(memory.EINVALID, "scope:%s is not a scope; use scope:personal or scope:server.", scope)
	case t.req.GuildID == "" && scope == string(memory.ScopeServer):
		return memory.Owner{}, memory.Errorf(memory.EINVALID, "There is no server memory in a DM; chat with --guild ID to use one.")
	case t.req.GuildID == "" || scope == string(memory.ScopePersonal):
		return memory.PersonalOwner(t.req.UserID), nil
	}
	return memory.ServerOwner(t.req.GuildID), nil
}

// ownerAndID reads the scope and the one memory id a command names.
func (t *terminalCommands) ownerAndID(a terminalArgs, usage string) (memory.Owner, int64, error) {
	owner, err := t.owner(a)
	if err != nil {
		return owner, 0, err
	}
	if len(a.words) != 1 {
		return owner, 0, memory.Errorf(memory.EINVALID, "Usage: %s", usage)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(a.words[0], "#"), 10, 64)
	if err != nil || id <= 0 {
		return owner, 0, memory.Errorf(memory.EINVALID, "%q is not a memory number; usage: %s", a.words[0], usage)
	}
	return owner, id, nil
}

// actor and writeContext are the member's, as a Discord command's are.
func (t *terminalCommands) actor() memory.Actor { return memory.UserActor(t.req.UserID) }

func (t *terminalCommands) writeContext() memory.WriteContext {
	return memory.WriteContext{WriterID: t.req.UserID, GuildID: t.req.GuildID, ChannelID: t.req.ChannelID}
}

// place names a scope as the place its memories are in.
func place(o memory.Owner) string {
	if o.Scope == memory.ScopePersonal {
		return "your personal memory"
	}
	return "this server's memory"
}

func (t *terminalCommands) list(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, err := t.owner(a)
	if err != nil {
		return err
	}
	typ := memory.Type(a.opts["type"])
	if typ != "" && !typ.Valid() {
		return memory.Errorf(memory.EINVALID, "type:%s is not a memory type; the types are %s.", typ, typeNames())
	}
	page := 1
	if p, ok := a.opts["page"]; ok {
		if page, err = strconv.Atoi(p); err != nil || page < 1 {
			return memory.Errorf(memory.EINVALID, "page:%s is not a page number.", p)
		}
	}
	opt := memory.ListOptions{Limit: terminalPageSize, Offset: (page - 1) * terminalPageSize, Type: typ, Tag: strings.ToLower(a.opts["tag"])}
	mems, total, err := t.store.Memories.List(ctx, owner, opt)
	if err != nil {
		return err
	}
	if total == 0 {
		fmt.Fprintf(out, "Nothing in %s yet.\n", place(owner))
		return nil
	}
	pages := (total + terminalPageSize - 1) / terminalPageSize
	printMemories(out, mems)
	fmt.Fprintf(out, "Page %d of %d, %d %s in %s.", page, pages, total, plural(total, "memory", "memories"), place(owner))
	if page < pages {
		fmt.Fprintf(out, " /list page:%d shows more.", page+1)
	}
	fmt.Fprintln(out)
	return nil
}

func (t *terminalCommands) search(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, err := t.owner(a)
	if err != nil {
		return err
	}
	if len(a.words) == 0 {
		return memory.Errorf(memory.EINVALID, "Usage: /search WORDS [type:T] [tag:X]")
	}
	// A member asked for these memories: the search counts as access and resets their decay.
	q := memory.SearchQuery{Text: strings.Join(a.words, " "), Owners: []memory.Owner{owner}, Limit: terminalPageSize,
		CountAccess: true, MatchesOnly: true}
	if typ := memory.Type(a.opts["type"]); typ != "" {
		if !typ.Valid() {
			return memory.Errorf(memory.EINVALID, "type:%s is not a memory type; the types are %s.", typ, typeNames())
		}
		q.Types = []memory.Type{typ}
	}
	if tag := a.opts["tag"]; tag != "" {
		q.Tags = []string{strings.ToLower(tag)}
	}
	results, err := t.store.Recall.Search(ctx, q)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		fmt.Fprintf(out, "Nothing in %s matches %q.\n", place(owner), q.Text)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCORE\tTYPE\tCONTENT")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\n", r.Memory.ID, r.Score, r.Memory.Type, oneLine(r.Memory.Content))
	}
	return tw.Flush()
}

func (t *terminalCommands) show(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, id, err := t.ownerAndID(a, "/show ID")
	if err != nil {
		return err
	}
	m, err := t.store.Memories.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "#%d in %s, version %d\n  %s\n", m.ID, place(owner), m.Version, m.Content)
	facts := []string{"type " + string(m.Type), "importance " + strconv.FormatFloat(m.EffectiveImportance(t.store.Now()), 'f', 2, 64)}
	if m.Pinned {
		facts = append(facts, "📌 pinned")
	}
	if len(m.Tags) > 0 {
		facts = append(facts, "tags "+strings.Join(m.Tags, ", "))
	}
	fmt.Fprintf(out, "  %s\n", strings.Join(facts, " · "))
	fmt.Fprintf(out, "  learned %s%s, %s, by %s\n", learnedWhere(m), learnedFrom(m), m.CreatedAt.Local().Format("2006-01-02 15:04 MST"), m.Source)
	events, err := t.store.Memories.History(ctx, owner, id)
	if err != nil || len(events) == 0 {
		return err
	}
	fmt.Fprintln(out, "  latest changes:")
	for i := len(events) - 1; i >= 0 && i >= len(events)-5; i-- {
		ev := events[i]
		fmt.Fprintf(out, "    v%d %s · %s · %s\n", ev.Version, ev.Action, describeTerminalActor(ev.Actor), ev.CreatedAt.Local().Format("2006-01-02 15:04"))
	}
	return nil
}

// learnedWhere says where a memory was learned.
func learnedWhere(m *memory.Memory) string {
	switch {
	case m.GuildID == "":
		return "in a DM"
	case m.Provenance.ChannelID != "":
		return fmt.Sprintf("in channel %s of server %s", m.Provenance.ChannelID, m.GuildID)
	}
	return "in server " + m.GuildID
}

// learnedFrom names who said it, when known.
func learnedFrom(m *memory.Memory) string {
	switch {
	case m.Provenance.Author != "":
		return " from " + m.Provenance.Author
	case m.Provenance.AuthorID != "":
		return " from " + m.Provenance.AuthorID
	}
	return ""
}

// describeTerminalActor names who made a change.
func describeTerminalActor(a memory.Actor) string {
	switch {
	case a == memory.ActorPipeline:
		return "the background pipeline"
	case a.UserID() != "":
		return "member " + a.UserID()
	case a.ModelUserID() != "":
		return "kioku, talking with " + a.ModelUserID()
	}
	return string(a)
}

func (t *terminalCommands) forget(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, err := t.owner(a)
	if err != nil {
		return err
	}
	switch {
	case len(a.words) == 0:
		return memory.Errorf(memory.EINVALID, "Usage: /forget ID, or /forget WORDS to see the matches first")
	case len(a.words) == 1 && a.words[0] == "confirm":
		return t.confirmForget(ctx, out)
	}
	if _, id, err := t.ownerAndID(a, "/forget ID"); err == nil {
		forgotten, err := t.store.Memories.Forget(ctx, owner, []int64{id}, t.actor(), "forgotten by command")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "🗑️ Forgot #%d: %s\nIt can be recovered for %d days: /undo %d.\n", id, oneLine(forgotten[0].Content), t.recoverDays(), id)
		return nil
	}
	p, err := t.store.Confirmations.PreviewForgetWithin(ctx, owner, strings.Join(a.words, " "), t.actor(), 10, nil)
	if err != nil {
		return err
	}
	t.pending = &pendingForget{owner: owner, token: p.Token, count: len(p.Matches)}
	printMemories(out, p.Matches)
	these := "this memory"
	if len(p.Matches) != 1 {
		these = fmt.Sprintf("these %d memories", len(p.Matches))
	}
	fmt.Fprintf(out, "Nothing is forgotten yet. To forget %s, type /forget confirm before %s.\n", these, p.ExpiresAt.Local().Format(clockFormat))
	return nil
}

// confirmForget carries out the last preview, exactly the memories it showed.
func (t *terminalCommands) confirmForget(ctx context.Context, out io.Writer) error {
	p := t.pending
	if p == nil {
		return memory.Errorf(memory.EINVALID, "There is nothing to confirm: /forget WORDS shows the matches first.")
	}
	t.pending = nil
	forgotten, err := t.store.Confirmations.ConfirmForget(ctx, p.owner, p.token, t.actor())
	if err != nil {
		return err
	}
	if len(forgotten) == 0 {
		fmt.Fprintln(out, "They were already forgotten.")
		return nil
	}
	ids := make([]string, len(forgotten))
	for i, m := range forgotten {
		ids[i] = "#" + strconv.FormatInt(m.ID, 10)
	}
	fmt.Fprintf(out, "🗑️ Forgot %s. Each can be recovered for %d days: /undo ID.\n", strings.Join(ids, ", "), t.recoverDays())
	return nil
}

func (t *terminalCommands) recoverDays() int { return int(t.store.RecoverWindow / (24 * time.Hour)) }

func (t *terminalCommands) undo(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, id, err := t.ownerAndID(a, "/undo ID [version:V]")
	if err != nil {
		return err
	}
	version := 0
	if v, ok := a.opts["version"]; ok {
		if version, err = strconv.Atoi(v); err != nil || version < 1 {
			return memory.Errorf(memory.EINVALID, "version:%s is not a version; versions start at 1.", v)
		}
	}
	res, err := t.store.Memories.UndoAs(ctx, t.writeContext(), owner, id, version, t.actor())
	if errors.Is(err, memory.ErrChangedSince) {
		return memory.Errorf(memory.ECONFLICT, "Memory #%d changed since; see /history %d.", id, id)
	}
	if err != nil {
		return err
	}
	m := res.Memory
	switch res.Action {
	case memory.ActionRecover:
		fmt.Fprintf(out, "↩️ Undid the forget of #%d: recovered, now version %d: %s\n", id, m.Version, oneLine(m.Content))
	case memory.ActionDelete:
		fmt.Fprintf(out, "↩️ Undid the %s of #%d: forgotten (recoverable for %d days).\n", res.Change.Action, id, t.recoverDays())
	default:
		fmt.Fprintf(out, "↩️ Undid the edit of #%d: now version %d: %s\n", id, m.Version, oneLine(m.Content))
	}
	return nil
}

func (t *terminalCommands) history(ctx context.Context, a terminalArgs, out io.Writer) error {
	owner, id, err := t.ownerAndID(a, "/history ID")
	if err != nil {
		return err
	}
	events, err := t.store.Memories.History(ctx, owner, id)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tV\tCHANGE\tBY\tCONTENT")
	for _, e := range events {
		content := e.NewContent
		if content == "" {
			content = e.OldContent
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", e.CreatedAt.Local().Format("2006-01-02 15:04"), e.Version, e.Action,
			describeTerminalActor(e.Actor), oneLine(content))
	}
	return tw.Flush()
}
