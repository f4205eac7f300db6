package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// maxREPLLine bounds one line of terminal input; a pasted document longer than this is
// more than a chat message anyway.
const maxREPLLine = 1 << 20

// Command answers a line of the REPL that starts with "/" (other than /quit and /exit),
// writing to out, instead of the line going to the model as a message: the terminal's
// memory views. ctx ends with the session.
type Command func(ctx context.Context, line string, out io.Writer)

// TerminalRequest is tmpl with what a terminal conversation leaves out filled in: an empty
// ChannelID becomes "cli" in a guild and "dm-<user>" in a DM, an empty UserName the user
// id. REPL uses it, so a transport that needs the conversation's channel (to look at what
// it learned) computes the same one.
func TerminalRequest(tmpl Request) Request {
	if tmpl.ChannelID == "" {
		tmpl.ChannelID = "cli"
		if tmpl.GuildID == "" {
			tmpl.ChannelID = "dm-" + tmpl.UserID
		}
	}
	if tmpl.UserName == "" {
		tmpl.UserName = tmpl.UserID
	}
	return tmpl
}

// REPL runs an interactive chat on in and out using the same turns as Discord: every line
// read is one message from tmpl's user in tmpl's guild and channel (a DM when GuildID is
// empty), completed by TerminalRequest. tmpl.UserID is required. Message ids are
// generated. Lines starting with "/" go to commands when it is not nil. It returns nil at
// end of input or on /quit (or /exit), and the context's error when ctx ends. A failed
// turn is reported on out and the session goes on, as a bot would.
func REPL(ctx context.Context, e *Engine, in io.Reader, out io.Writer, tmpl Request, commands Command) error {
	if tmpl.UserID == "" {
		return errors.New("couldn't start chat: a user id is required")
	}
	tmpl = TerminalRequest(tmpl)
	where := "a direct message"
	if tmpl.GuildID != "" {
		where = fmt.Sprintf("guild %s, channel %s", tmpl.GuildID, tmpl.ChannelID)
	}
	leave := "Type /quit to leave."
	if commands != nil {
		leave = "Type /help for commands, /quit to leave."
	}
	fmt.Fprintf(out, "Chatting with %s as %s in %s. %s\n", e.cfg.BotName, tmpl.UserName, where, leave)

	// Lines are read on their own goroutine so that ctx (Ctrl-C) ends the session even
	// while waiting for input; the goroutine ends with the input.
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64*1024), maxREPLLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()

	session := time.Now().UnixNano()
	for n := 1; ; n++ {
		fmt.Fprint(out, "> ")
		var line string
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return ctx.Err()
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(out)
				select {
				case err := <-readErr:
					if err != nil {
						return fmt.Errorf("couldn't read input: %w", err)
					}
				default:
				}
				return nil
			}
			line = strings.TrimSpace(l)
		}
		switch {
		case line == "":
			continue
		case line == "/quit", line == "/exit":
			return nil
		case commands != nil && strings.HasPrefix(line, "/"):
			commands(ctx, line, out)
			continue
		}
		req := tmpl
		req.Content = line
		req.MessageID = fmt.Sprintf("cli-%d-%d", session, n)
		req.At = time.Time{}
		reply, err := e.Turn(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(out)
				return ctx.Err()
			}
			fmt.Fprintf(out, "[error] %s\n", memory.ErrorMessage(err))
			e.log.Error("chat turn failed", slog.String("user_id", req.UserID), slog.String("message_id", req.MessageID), slog.Any("err", err))
			continue
		}
		writeReply(out, e.cfg.BotName, reply)
	}
}

// writeReply prints a reply the way the terminal shows it: the text, then one line per
// memory notice.
func writeReply(out io.Writer, bot string, r Reply) {
	if r.Ignored {
		fmt.Fprintln(out, "(ignored: your privacy level is full, or the message was empty)")
		return
	}
	fmt.Fprintf(out, "%s: %s\n", bot, r.Text)
	for _, n := range r.Notices {
		fmt.Fprintln(out, n.String())
	}
}
