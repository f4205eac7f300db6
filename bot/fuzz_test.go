package bot_test

import (
	"log/slog"
	"math"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// discordMarkup matches what Discord renders from a token that must stay whole: user,
// role and channel mentions, custom emoji and timestamps.
var discordMarkup = regexp.MustCompile(`<(?:@[!&]?\d+|#\d+|a?:\w+:\d+|t:-?\d+(?::[tTdDfFR])?)>`)

// FuzzSplitMessage checks SplitMessage on arbitrary text. Each chunk has at most limit
// runes (Discord's limit counts characters, and SplitMessage counts runes) and is not
// blank; valid UTF-8 stays valid. The chunks give back the whole text: each chunk, less
// the fence line SplitMessage may add at its start and the "\n```" it may add at its end
// (which may also stand for a closing fence line of the text right after it), is the
// next part of the text, and only white space lies between two parts and after
// the last. Every chunk closes the code blocks it opens (the last one ends open only
// when the text does); a cut inside a code block closes it in one chunk and reopens it
// at the start of the next, unless the block ends right there; no cut falls inside a
// fence marker or inside a mention, custom emoji or timestamp.
func FuzzSplitMessage(f *testing.F) {
	f.Add("hello world. this is kioku.\n\n```go\ncode\n```", 200)
	f.Add(strings.Repeat("記憶。", 300), 250)
	f.Add(strings.Repeat("x <@&42><#7>", 200), 200)
	f.Add("intro\n```python\n"+strings.Repeat("print('hi')\n", 60)+"```\noutro", 300)
	f.Add(strings.Repeat("a", 195)+"```go\n"+strings.Repeat("b", 300), 200)
	f.Add(strings.Repeat("  \r\n\n", 100)+"end", 0)
	f.Add("a\xffb"+strings.Repeat("\xff", 500), 200)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit <= 0 {
			limit = bot.MaxMessageRunes
		}
		limit = max(limit%3000, 200)
		chunks := bot.SplitMessage(text, limit)
		for i, c := range chunks {
			if n := utf8.RuneCountInString(c); n > limit {
				t.Fatalf("chunk %d has %d runes, limit %d", i, n, limit)
			}
			if strings.TrimSpace(c) == "" {
				t.Fatalf("chunk %d is blank", i)
			}
			if utf8.ValidString(text) && !utf8.ValidString(c) {
				t.Fatalf("chunk %d is not valid UTF-8 (a rune was cut)", i)
			}
			// The last chunk ends like the text: a text that leaves a block open is not
			// SplitMessage's to close.
			if fenceOpen(c) && (i < len(chunks)-1 || !fenceOpen(text)) {
				t.Fatalf("chunk %d leaves a code block open:\n%s", i, c)
			}
		}
		if strings.TrimSpace(text) == "" {
			if len(chunks) != 0 {
				t.Fatalf("blank text gave %d chunks", len(chunks))
			}
			return
		}
		parts, ok := matchChunks(text, chunks)
		if !ok {
			t.Fatalf("the chunks are not the text in order, less white space at the cuts and added fences:\ntext %q\nchunks %q", text, chunks)
		}
		for i, p := range parts[:len(parts)-1] {
			if inFenceLine(text, p.end) || inFenceLine(text, parts[i+1].start) {
				t.Fatalf("cut %d falls inside a fence line: …%q | %q…", i, text[max(0, p.end-20):p.end], text[p.end:min(len(text), p.end+20)])
			}
			if next := parts[i+1]; next.reopened {
				if line, _, _ := strings.Cut(text[next.start:], "\n"); isFence(line) {
					t.Fatalf("chunk %d reopens a code block only to close it: %q", i+1, chunks[i+1])
				}
			}
			open, next := fenceOpen(text[:p.end]), p.end
			if p.fenceEnd > 0 {
				next = p.fenceEnd
			}
			if open != p.closed || fenceOpen(text[:next]) != parts[i+1].reopened {
				t.Fatalf("cut %d inside a code block = %v, but the chunk closed it = %v and the next reopened it = %v:\n%q\n%q",
					i, open, p.closed, parts[i+1].reopened, chunks[i], chunks[i+1])
			}
		}
		if want, got := len(discordMarkup.FindAllString(text, -1)), countMarkup(chunks); got != want {
			t.Fatalf("the text has %d mentions, emoji and timestamps but the chunks %d: one was cut\nchunks %q", want, got, chunks)
		}
	})
}

// part is where a chunk's text lies in the original, and what SplitMessage added to it.
type part struct {
	start, end       int
	reopened, closed bool
	// fenceEnd, when set, is the end of the text's closing fence line that the added
	// "\n```" stands for.
	fenceEnd int
}

// matchChunks finds each chunk in text, in order, allowing an added fence line at a
// chunk's start, an added "\n```" at its end, and white space between chunks and after
// the last.
func matchChunks(text string, chunks []string) ([]part, bool) {
	failed := map[[2]int]bool{}
	parts := make([]part, len(chunks))
	var match func(i, pos int) bool
	match = func(i, pos int) bool {
		if i == len(chunks) {
			return strings.TrimSpace(text[pos:]) == ""
		}
		if failed[[2]int{i, pos}] {
			return false
		}
		c := chunks[i]
		for _, reopened := range []bool{false, true} {
			for _, closed := range []bool{false, true} {
				core := c
				if closed {
					var ok bool
					if core, ok = strings.CutSuffix(core, "\n```"); !ok {
						continue
					}
				}
				if reopened {
					line, rest, ok := strings.Cut(core, "\n")
					if !ok || !strings.HasPrefix(line, "```") || i == 0 || !parts[i-1].closed {
						continue
					}
					core = rest
				}
				start, ok := locate(text, pos, core)
				if !ok {
					continue
				}
				end := start + len(core)
				parts[i] = part{start: start, end: end, reopened: reopened, closed: closed}
				if match(i+1, end) {
					return true
				}
				if closed {
					// The fence added at the cut may stand for the block's own closing
					// fence, a "```" line right after it, which the next chunk then skips.
					if after, ok := closingFenceAt(text, end); ok {
						parts[i].fenceEnd = after
						if match(i+1, after) {
							return true
						}
						parts[i].fenceEnd = 0
					}
				}
			}
		}
		failed[[2]int{i, pos}] = true
		return false
	}
	return parts, match(0, 0)
}

// closingFenceAt reports whether, after white space, text at pos holds a line that is
// only a closing fence "```", and returns where that line ends.
func closingFenceAt(text string, pos int) (int, bool) {
	q := pos + len(text[pos:]) - len(strings.TrimLeftFunc(text[pos:], unicode.IsSpace))
	if q == pos || text[q-1] != '\n' {
		return 0, false
	}
	line, _, _ := strings.Cut(text[q:], "\n")
	if strings.TrimRight(line, " \t\r") != "```" {
		return 0, false
	}
	return q + len(line), true
}

// locate returns where core starts in text if only white space lies between pos and it.
func locate(text string, pos int, core string) (int, bool) {
	lead := len(core) - len(strings.TrimLeftFunc(core, unicode.IsSpace))
	q := pos + len(text[pos:]) - len(strings.TrimLeftFunc(text[pos:], unicode.IsSpace))
	if core[lead:] == "" {
		// A chunk of white space only: it would be blank, which is checked elsewhere.
		return 0, false
	}
	start := q - lead
	if start < pos || !strings.HasPrefix(text[start:], core) {
		return 0, false
	}
	return start, true
}

// isFence reports whether a line opens or closes a code block, as SplitMessage reads
// them.
func isFence(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "```") }

// fenceOpen reports whether s ends inside a code block.
func fenceOpen(s string) bool {
	open := false
	for line := range strings.SplitSeq(s, "\n") {
		if isFence(line) {
			open = !open
		}
	}
	return open
}

// inFenceLine reports whether offset i falls strictly inside a fence marker: a fence line
// of one word ("```", "```go") of at most 32 bytes. A fence line with more on it is cut
// like prose: what follows the fence is the block's first line of code either way.
func inFenceLine(text string, i int) bool {
	lineStart := strings.LastIndexByte(text[:i], '\n') + 1
	lineEnd := len(text)
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		lineEnd = i + n
	}
	line := text[lineStart:lineEnd]
	marker := strings.TrimSpace(line)
	if !isFence(line) || len(marker) > 32 || strings.ContainsFunc(marker, unicode.IsSpace) {
		return false
	}
	first := lineStart + len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
	last := first + len(marker)
	return first < i && i < last
}

func countMarkup(chunks []string) int {
	n := 0
	for _, c := range chunks {
		n += len(discordMarkup.FindAllString(c, -1))
	}
	return n
}

// commandTarget is one slash command or button the fuzzer can invoke.
type commandTarget struct {
	name, sub string
	options   []*discordgo.ApplicationCommandOption
	button    string // the custom ID prefix of a button; empty for commands
}

// commandTargets lists every chat command and subcommand of bot.Commands with its
// options, and every button.
func commandTargets() []commandTarget {
	var out []commandTarget
	for _, cmd := range bot.Commands() {
		if cmd.Type == discordgo.MessageApplicationCommand {
			continue
		}
		if len(cmd.Options) > 0 && cmd.Options[0].Type == discordgo.ApplicationCommandOptionSubCommand {
			for _, sub := range cmd.Options {
				out = append(out, commandTarget{name: cmd.Name, sub: sub.Name, options: sub.Options})
			}
			continue
		}
		out = append(out, commandTarget{name: cmd.Name, options: cmd.Options})
	}
	for _, b := range []string{"mem:page:", "mem:forget:", "mem:cancel", "forgetme:confirm:", "forgetme:cancel",
		"kioku:undo:", "kioku:edit:", "kioku:list:"} {
		out = append(out, commandTarget{button: b})
	}
	return out
}

// FuzzCommandOptions invokes every slash command and button with arbitrary option values
// (strings, ids, integers that are fractional, negative, huge or not numbers, values of
// the wrong type, options left out, attachments with arbitrary content, custom IDs with
// arbitrary tails), in a server and in a DM, by members with and without Manage Server,
// on a real store and a fake Discord. Every interaction is answered, and none fails
// inside: bad input gets a domain message saying what is wrong.
func FuzzCommandOptions(f *testing.F) {
	targets := commandTargets()
	for i := range targets {
		f.Add(uint8(i), "server", 3.0, uint8(0xff), uint8(0))
		f.Add(uint8(i), "personal", 1.5, uint8(0x0f), uint8(0x61))
		f.Add(uint8(i), "", -1.0, uint8(0x01), uint8(0x82))
	}
	f.Add(uint8(0), "green tea", math.NaN(), uint8(0xff), uint8(0x03))
	f.Add(uint8(1), "#1,2,x", math.Inf(1), uint8(0xff), uint8(0x20))
	f.Add(uint8(2), "server:0:fact:n", 1e300, uint8(0xff), uint8(0x40))
	f.Add(uint8(3), `{"format":"kioku.memories.v1","memories":[{"content":"imported fact"}]}`, 0.0, uint8(0xff), uint8(0x10))
	for i, t := range targets {
		switch t.button {
		case "mem:page:":
			f.Add(uint8(i), "server:0::n", 0.0, uint8(0), uint8(0x20))
			f.Add(uint8(i), "personal:-20:fact:p", 0.0, uint8(0), uint8(0x41))
			f.Add(uint8(i), "server:99999999999999999999:x:n", 0.0, uint8(0), uint8(0x22))
		case "mem:forget:":
			f.Add(uint8(i), "server:0123456789abcdef", 0.0, uint8(0), uint8(0x20))
		case "forgetme:confirm:":
			f.Add(uint8(i), "0123456789abcdef", 0.0, uint8(0), uint8(0x01))
		case "kioku:undo:", "kioku:edit:":
			f.Add(uint8(i), "s:1:1", 0.0, uint8(0), uint8(0x20))
			f.Add(uint8(i), "p:1:1", 0.0, uint8(0), uint8(0x21))
			f.Add(uint8(i), "s:99999999999999999999:1", 0.0, uint8(0), uint8(0x22))
		case "kioku:list:":
			f.Add(uint8(i), "n:s:0:::", 0.0, uint8(0), uint8(0x20))
			f.Add(uint8(i), "p:p:3:fact:123:raid", 0.0, uint8(0), uint8(0x21))
		}
	}

	tb := newFuzzBot(f)
	users := []*discordgo.User{tb.fake.NewUser("alice"), tb.fake.NewUser("bob"), tb.fake.NewUser("carol")}
	testkit.MustRemember(f, tb.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "500", Content: "The meetup is on Saturday"})
	f.Fuzz(func(t *testing.T, which uint8, s string, num float64, present, flags uint8) {
		target := targets[int(which)%len(targets)]
		guild, channel := "500", "501"
		if flags&0x40 != 0 {
			guild, channel = "", "800"
		}
		var perms int64
		if flags&0x20 != 0 {
			perms = discordgo.PermissionManageGuild
		}
		user := users[int(flags&0x03)%len(users)]
		var i *discordgo.Interaction
		if target.button != "" {
			i = tb.fake.ComponentClick(guild, channel, user, perms, target.button+s, nil)
		} else {
			data := discordgo.ApplicationCommandInteractionData{Name: target.name}
			opts := fuzzOptions(tb.fake, channel, target.options, s, num, present, flags, &data)
			if target.sub != "" {
				opts = []*discordgo.ApplicationCommandInteractionDataOption{{Name: target.sub,
					Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}}
			}
			data.Options = opts
			i = tb.fake.SlashCommand(guild, channel, user, perms, data)
		}
		before := tb.bot.Stats().InteractionErrors
		msg, _ := tb.interact(t, i)
		if tb.bot.Stats().InteractionErrors != before {
			t.Fatalf("%s %s%s with %q, %v failed inside: %q", target.name, target.sub, target.button, s, num, msg.Content)
		}
		if msg.Content == "" && len(msg.Embeds) == 0 {
			t.Fatalf("%s %s%s with %q, %v was answered with nothing", target.name, target.sub, target.button, s, num)
		}
	})
}

// fuzzOptions builds the option values of one invocation: option k is sent when bit k of
// present is set, with a value of its declared type unless flags bit 7 asks for the
// wrong types.
func fuzzOptions(fake *fakediscord.Fake, channel string, defs []*discordgo.ApplicationCommandOption, s string, num float64,
	present, flags uint8, data *discordgo.ApplicationCommandInteractionData) []*discordgo.ApplicationCommandInteractionDataOption {
	var out []*discordgo.ApplicationCommandInteractionDataOption
	for k, def := range defs {
		if k < 8 && present&(1<<k) == 0 {
			continue
		}
		o := &discordgo.ApplicationCommandInteractionDataOption{Name: def.Name, Type: def.Type}
		switch def.Type {
		case discordgo.ApplicationCommandOptionInteger, discordgo.ApplicationCommandOptionNumber:
			o.Value = num
		case discordgo.ApplicationCommandOptionBoolean:
			o.Value = flags&0x08 != 0
		case discordgo.ApplicationCommandOptionAttachment:
			att := fake.AddAttachment(channel, "memories.json", "application/json", []byte(s))
			o.Value = att.ID
			if flags&0x10 != 0 {
				data.Resolved = &discordgo.ApplicationCommandInteractionDataResolved{
					Attachments: map[string]*discordgo.MessageAttachment{att.ID: att}}
			}
		default:
			o.Value = s
			if len(def.Choices) > 0 && flags&0x04 != 0 {
				o.Value = def.Choices[int(present>>4)%len(def.Choices)].Value
			}
		}
		if flags&0x80 != 0 {
			switch o.Value.(type) {
			case string:
				o.Value = num
			default:
				o.Value = s
			}
		}
		out = append(out, o)
	}
	return out
}

// newFuzzBot is newTestBot for a fuzz test: one bot on a real store and a fake Discord,
// shared by every input.
func newFuzzBot(tb testing.TB) *testBot {
	tb.Helper()
	store := testkit.MustOpenStore(tb)
	fake := fakediscord.New(tb)
	s, err := bot.NewSession("fake-bot-token", fake.URL())
	if err != nil {
		tb.Fatal(err)
	}
	s.State.User = fake.BotUser()
	short, err := stm.New(stm.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	turner := &turnerFunc{fn: func(chat.Request) (chat.Reply, error) { return chat.Reply{Text: "ok"}, nil }}
	b, err := bot.New(bot.Config{Session: s, Store: botStore(store), STM: short, Turner: turner,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return &testBot{bot: b, session: s, fake: fake, store: store, turner: turner}
}
