package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// learnWait bounds how long `kioku chat` waits, on leaving, for the extraction of what was
// said: a local model may take a minute for an extraction and its decisions.
const learnWait = 3 * time.Minute

// learnPoll is how often the wait looks at the conversation's extraction.
const learnPoll = 100 * time.Millisecond

// runChat is `kioku chat`: the whole bot in the terminal, one line one message, against the
// configured database and model (any OpenAI-compatible endpoint, such as a local Ollama).
// It runs the bot's core as `kioku run` does, background pipeline included, so what is said
// here is learned as it would be in Discord; `/` commands show and change memory as the
// Discord commands do. Without --guild the conversation is a DM with --user. On leaving
// (/quit or the end of input) it learns from the conversation before it exits.
func runChat(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "chat")
	user := fs.String("user", "local", "your user id (memories you save are this user's)")
	name := fs.String("name", "", "your display name (default: the user id)")
	guild := fs.String("guild", "", "guild id to chat in (default: a DM)")
	channel := fs.String("channel", "", "channel id in the guild (default: cli)")
	logFile := fs.String("log", "", "write the log to this file at KIOKU_LOG_LEVEL (default: warnings and errors on stderr)")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *user == "" {
		return usagef("--user must not be empty")
	}
	closeLog, err := app.chatLogger(*logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	store, err := app.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	core, err := app.newCore(store, nil) // the terminal has no channels to restrict
	if err != nil {
		return err
	}
	// The core's background work (forget watch, repairs, first diagnosis) ends with the
	// session, before the store closes.
	runCtx, cancel := context.WithCancel(ctx)
	defer core.background.Wait()
	defer cancel()
	if err := core.start(runCtx, app.config); err != nil {
		return err
	}
	started := store.Now()
	// The operator holds the database itself (`kioku memories`), so in the terminal the
	// model may change any server memory for them.
	req := chat.TerminalRequest(chat.Request{GuildID: *guild, ChannelID: *channel, UserID: *user, UserName: *name, ServerEditor: true})
	cmds := newTerminalCommands(store, req)
	replErr := chat.REPL(runCtx, core.engine, app.Stdin, app.Stdout, req, cmds.run)
	if errors.Is(replErr, context.Canceled) && ctx.Err() != nil {
		// Ctrl-C is a way to leave, not a failure; what was not learned stays queued.
		replErr = nil
	} else if replErr == nil { // left by /quit or the end of input
		learnBeforeLeaving(runCtx, core, req, started, app.Stdout)
		reportLearned(runCtx, store, req, started, app.Stdout)
	}
	// A job cut short goes back to the queue without losing an attempt.
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer stopCancel()
	if err := core.stop(stopCtx); err != nil && replErr == nil {
		return err
	}
	return replErr
}

// chatLogger points the log away from the conversation: into file at KIOKU_LOG_LEVEL when
// one is named, otherwise onto stderr at warn or above, so the REPL stays readable. The
// returned function closes the file.
func (app *App) chatLogger(file string) (func(), error) {
	cfg := app.config
	if file == "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil || level < slog.LevelWarn {
			cfg.LogLevel = "warn"
		}
		app.logger = newLogger(app.Stderr, cfg)
		return func() {}, nil
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("couldn't open the log file (--log): %w", err)
	}
	app.logger = newLogger(f, cfg)
	return func() { _ = f.Close() }, nil
}

// learnBeforeLeaving makes the conversation's extraction due now, as a high-signal turn
// would, and waits while it runs: here, or in a `kioku run` on the same database whose
// worker leased it first. Without it a remark made in passing would wait for the idle timer
// of a conversation that has just ended. It says so whenever the member said something
// this session with the pipeline on, however far the work has got, and stops waiting when
// the conversation is extracted, when its job waits for later (a spent budget, a retry) or
// is gone, after learnWait, or on Ctrl-C; what is left stays queued for the next run.
func learnBeforeLeaving(ctx context.Context, core *botCore, req chat.Request, since time.Time, out io.Writer) {
	if f := core.pipe.Config().Flags; f != nil && f.Mode() == memory.PipelineOff {
		return
	}
	last, err := core.store.Transcripts.RecentTurns(ctx, req.GuildID, req.ChannelID, req.UserID, 1)
	if err != nil || len(last) == 0 || last[0].CreatedAt.Before(since) {
		return // nothing said this session (or at privacy full, nothing kept)
	}
	fmt.Fprintln(out, "Learning from this conversation before leaving (Ctrl-C leaves it queued for later)…")
	backlog, err := core.store.Transcripts.ExtractionBacklog(ctx, req.GuildID, req.ChannelID)
	if err != nil || backlog.UserTurns == 0 {
		return
	}
	// The hook applies the same rules as to any turn: nothing for a member at privacy
	// full, nor where a server turned the pipeline off.
	err = core.pipe.OnTurn(ctx, memory.Turn{Role: memory.RoleUser, GuildID: req.GuildID, ChannelID: req.ChannelID, UserID: req.UserID}, true)
	if err != nil {
		core.log.Warn("couldn't schedule learning from the conversation; it stays queued", "err", err)
		return
	}
	key := pipeline.ExtractionKey(req.GuildID, req.ChannelID)
	deadline := time.Now().Add(learnWait)
	for {
		done, err := conversationLearned(ctx, core.store, req, key)
		if err != nil {
			if ctx.Err() == nil {
				core.log.Warn("couldn't follow learning from the conversation", "err", err)
			}
			return
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(out, "Still learning; the rest waits in the queue for the next `kioku chat` or `kioku run`.")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(learnPoll):
		}
	}
}

// conversationLearned reports whether waiting for the conversation's extraction is over:
// nothing left to extract, or no job running it or due to run it now.
func conversationLearned(ctx context.Context, store *backend, req chat.Request, key string) (bool, error) {
	backlog, err := store.Transcripts.ExtractionBacklog(ctx, req.GuildID, req.ChannelID)
	if err != nil || backlog.UserTurns == 0 {
		return true, err
	}
	jobs, err := store.Jobs.FindJobs(ctx, memory.JobFilter{States: []string{memory.JobQueued, memory.JobLeased}})
	if err != nil {
		return true, err
	}
	for _, j := range jobs {
		if j.Kind == pipeline.KindExtract && j.DedupKey == key {
			return j.State == memory.JobQueued && j.RunAfter.After(store.Now()), nil
		}
	}
	return true, nil
}

// reportLearned lists the memories the background pipeline made since the session started
// in the scopes this conversation writes to.
func reportLearned(ctx context.Context, store *backend, req chat.Request, since time.Time, out io.Writer) {
	owners := []memory.Owner{memory.PersonalOwner(req.UserID)}
	if req.GuildID != "" {
		owners = append(owners, memory.ServerOwner(req.GuildID))
	}
	var learned []*memory.Memory
	for _, o := range owners {
		mems, _, err := store.Memories.List(ctx, o, memory.ListOptions{Limit: 50})
		if err != nil {
			return
		}
		for _, m := range mems {
			if m.Source == memory.SourcePipeline && !m.CreatedAt.Before(since) {
				learned = append(learned, m)
			}
		}
	}
	if len(learned) == 0 {
		return
	}
	fmt.Fprintf(out, "Learned in this conversation (/show ID in the next `kioku chat`):\n")
	for _, m := range learned {
		fmt.Fprintf(out, "  📌 #%d (%s): %s\n", m.ID, m.Scope, oneLine(m.Content))
	}
}
