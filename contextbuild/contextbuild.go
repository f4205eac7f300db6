// Package contextbuild assembles the messages of one chat turn within a token budget
// (SPEC §3 step 4).
//
// # Layout
//
// Build sends at most one system message, first, followed by one message per history turn
// and the newest message:
//
//	system:    persona, instructions, speaker note, current time,
//	           long-term memory (server, then personal), short-term memory
//	user/assistant: recent turns, oldest first
//	user:      the newest message
//
// Everything the bot knows goes into that single system message rather than into several:
// the model gives every system message the same authority, so splitting buys no protection,
// while the chat templates of some open models served through OpenAI-compatible servers
// (vLLM, LM Studio, Ollama) reject or silently drop a system message that is not the first
// one. The stable parts (persona, instructions) come first and the per-turn parts (time,
// memories) after them, so providers that cache prompt prefixes can reuse the stable head.
//
// # Memories are data
//
// Memories and short-term memory reach the model as quoted data, never as instructions
// (ARCHITECTURE invariant 7). Each memory is one line,
//
//	[id:42] (preference, saved 2026-03-01) "likes green tea"
//
// under a heading that says the block is data. The text between the quotes is escaped so it
// cannot end the quotation or the line (quotes, backslashes, line breaks and other control
// characters become escape sequences), and text shaped like a role or chat-template marker
// ("[system]", "<|im_start|>", "</s>", "[INST]", a forged "[id:7]") gets a backslash in front
// so it reads as quoted text, not structure. Conversation turns are sent as they were written:
// they already carry the user's own authority and no more.
//
// # Speakers
//
// In a guild several people share the conversation, so user turns are prefixed with the
// speaker's display name ("Alice: hi"). The OpenAI Name field is not used: it only allows
// [a-zA-Z0-9_-], which would erase Japanese names, and some OpenAI-compatible servers reject
// or ignore it. DMs have one speaker and skip the prefix (Input.DM).
//
// # Budget
//
// Tokens are estimated as characters/4 (EstimateTokens) plus MessageOverheadTokens per
// message. When everything does not fit, Build gives things up in a fixed order, each stage
// starting only when the previous one is exhausted:
//
//  1. history turns, oldest first;
//  2. memories, lowest-ranked first: personal memories before server memories;
//  3. short-term memory: the oldest crude messages first, then the rest is truncated.
//
// The system prompt (persona and instructions) and the newest message are always sent, even
// when they alone exceed the budget (Output.OverBudget reports it).
//
// Personal memories go before server memories because server memories were recalled for this
// very message and are shared knowledge every participant may rely on, while personal
// memories describe individuals: when space is short it is better to surface less personal
// data in a shared channel. It also keeps the cut at the tail of the memory block, in the
// order the block is rendered.
package contextbuild

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

const (
	// MessageOverheadTokens is added to the estimate of every message for its role and
	// framing; OpenAI's own counting guide charges 3–4 tokens per message.
	MessageOverheadTokens = 4

	// MinBudget is the smallest budget Budget returns and the one Build uses when
	// Input.Budget is not positive: a persona and a short exchange fit in it. A smaller
	// budget only comes from a misconfiguration (a reply reservation as large as the
	// context window), and a prompt without the persona would be worse than an over-long
	// one the server can reject with a clear error.
	MinBudget = 256

	// minTruncatedRunes is the least room worth keeping a truncated short-term memory
	// for: below it the fragment says too little to be worth its tokens.
	minTruncatedRunes = 16
)

// Roles of a Turn.
const (
	// RoleUser marks a turn written by a person.
	RoleUser = openai.ChatMessageRoleUser
	// RoleAssistant marks a reply written by the bot.
	RoleAssistant = openai.ChatMessageRoleAssistant
)

// EstimateTokens is the chars/4 estimate of SPEC §3: characters (runes, not bytes, so
// Japanese text is not counted three times over) divided by four, rounded up, so it is never
// 0 for non-empty text.
//
// It underestimates text that tokenizes densely, Japanese above all (often about one token
// per character); the 10% margin Budget keeps absorbs part of that.
func EstimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// Budget returns the prompt budget of SPEC §3: (contextWindow − maxOutput) × 0.9, the 10%
// margin covering the estimate's error and the tool definitions sent with the request. It
// is at least MinBudget.
func Budget(contextWindow, maxOutput int) int {
	room := contextWindow - maxOutput
	if room <= 0 {
		return MinBudget
	}
	// room/10*9 + the remainder's share: 0.9 × room rounded down without overflowing.
	b := room/10*9 + room%10*9/10
	return max(b, MinBudget)
}

// Turn is one message of the conversation.
type Turn struct {
	// Role is RoleUser or RoleAssistant. Anything else is sent as a user turn, so caller
	// data can never become a system message.
	Role string
	// AuthorID and AuthorName say who wrote a user turn; the name (else the ID) prefixes
	// the turn in a guild.
	AuthorID, AuthorName string
	// Content is sent as written. Turns with blank content are skipped: several servers
	// reject an empty message.
	Content string
	// At is when the turn was written; it is carried for the caller and not rendered.
	At time.Time
}

// Input is everything one turn's prompt is built from.
type Input struct {
	// System is the persona/system prompt: the guild's persona or the default. Always sent.
	System string
	// Instructions is extra system guidance, e.g. the short-term-memory tool nudge (the
	// caller omits it when the intent gate fired). Always sent, after System.
	Instructions []string
	// ServerMemories are the recalled and pinned server memories, best first; the order is
	// the rank used when memories must be dropped. Nil entries, tombstones and repeated ids
	// are skipped.
	ServerMemories []*memory.Memory
	// PersonalMemories are participants' personal memories, already privacy-filtered, best
	// first. They are dropped before any server memory.
	PersonalMemories []*memory.Memory
	// PersonalOwners maps a user ID to the display name that labels whose personal memory
	// a line is; a missing name falls back to the user ID.
	PersonalOwners map[string]string
	// STM is the short-term memory view: the summary, else the crude messages. Crude
	// messages that repeat a History turn or Message (same role, author and content) are
	// left out, so a caller may pass the entry and the recent turns it overlaps.
	STM stm.View
	// History is the recent turns, oldest first, not including Message.
	History []Turn
	// Message is the newest user turn; it is never dropped.
	Message Turn
	// DM is set in a direct message. With a single speaker, user turns are sent without the
	// name prefix; the zero value prefixes, which is right for guilds.
	DM bool
	// Budget is the token budget (see Budget); not positive means MinBudget.
	Budget int
	// Now is rendered into the system prompt as the current date and time (UTC), so the
	// model can reason about "yesterday" and how old a memory is. Zero omits it.
	Now time.Time
}

// Output is the prompt and what was left out to fit the budget.
type Output struct {
	// Messages are ready for a chat-completion request.
	Messages []openai.ChatCompletionMessage
	// Tokens is the estimate of everything in Messages, overhead included. It is at most
	// the budget unless OverBudget.
	Tokens int
	// DroppedTurns is how many history turns were cut to fit, all of them the oldest.
	DroppedTurns int
	// DroppedMemories is how many memories were cut to fit, lowest-ranked first.
	DroppedMemories int
	// MemoryIDs are the ids of the memories actually rendered, in prompt order, for access
	// tracking: a memory cut for space was not used and must not look used.
	MemoryIDs []int64
	// TruncatedSTM is set when short-term memory was shortened or left out to fit.
	TruncatedSTM bool
	// OverBudget is set when the system prompt and the newest message alone exceed the
	// budget: they are sent anyway, with nothing else, and Tokens is over the budget. The
	// caller may log it or tell the person their message is too long.
	OverBudget bool
}

// plan is what Build decided to keep; render turns it into text.
type plan struct {
	note bool // the speaker note goes into the system prompt

	stm      stmKind
	stmFrom  int    // first crude message kept (older ones were dropped)
	stmLimit int    // rune limit of the one truncated text, or -1
	repeats  uint64 // bit i: crude message i repeats a turn (see repeatsTurn); set for i < 64

	serverEnd, personalEnd int // memories kept: ServerMemories[:serverEnd], PersonalMemories[:personalEnd]
	historyFrom            int // History[historyFrom:] kept
}

type stmKind int

const (
	stmNone stmKind = iota
	stmSummary
	stmCrude
)

// Build assembles the prompt of one turn within in.Budget. It runs on every turn, so it
// measures each piece once while planning and then renders once, into buffers of the exact
// size.
func Build(in Input) Output {
	budget := in.Budget
	if budget <= 0 {
		budget = MinBudget
	}
	var out Output
	p := plan{stmLimit: -1, historyFrom: len(in.History)}

	// The message is the user's whatever its Role says: it is never sent with more authority.
	msgName := ""
	if !in.DM {
		msgName = displayName(in.Message)
	}
	msgTokens := turnTokens(msgName, in.Message.Content)
	p.note = !in.DM && (msgName != "" || anyNamedTurn(&in))

	// The system message may hold maxSys runes: sysTokens(maxSys) + msgTokens ≤ budget.
	maxSys := (budget - msgTokens - MessageOverheadTokens) * 4
	var used text // the system message planned so far
	writeHead(&used, &in, &p)
	memories := countMemories(&in)
	planSTMKind(&in, &p)

	if used.runes > maxSys {
		// The system prompt and the message alone are over: they go out anyway, alone.
		out.OverBudget = true
		out.TruncatedSTM = p.stm != stmNone
		out.DroppedMemories = memories
		out.DroppedTurns = countTurns(in.History)
		p.stm = stmNone
		return render(&in, &p, msgName, used, out)
	}

	// Each stage below runs only when the one before it kept everything: that is what
	// makes history go first, then memories, then short-term memory.
	complete := true
	if p.stm != stmNone {
		var block text
		if used.runes > 0 {
			block.str(sectionSep)
		}
		sep := block
		writeSTM(&block, &in, &p)
		if used.runes+block.runes > maxSys {
			complete = false
			out.TruncatedSTM = true
			block = sep
			if fitSTM(&in, &p, maxSys-used.runes-sep.runes) {
				writeSTM(&block, &in, &p)
			} else {
				p.stm, block = stmNone, text{}
			}
		}
		used.add(block)
	}

	out.DroppedMemories = memories
	if complete {
		complete = planMemories(&in, &p, &used, maxSys)
		out.DroppedMemories = memories - keptMemories(&in, &p)
	}

	if complete {
		left := budget - msgTokens - sysTokens(used.runes)
		for i := len(in.History) - 1; i >= 0; i-- {
			h := in.History[i]
			if blank(h.Content) {
				continue
			}
			cost := turnTokens(speaker(&in, h), h.Content)
			if cost > left {
				break
			}
			left -= cost
			p.historyFrom = i
		}
	}
	out.DroppedTurns = countTurns(in.History[:p.historyFrom])
	return render(&in, &p, msgName, used, out)
}

// planMemories keeps the longest prefix of server-then-personal memories that fits in a
// system message of maxSys runes, adding what it keeps to used. It reports whether every
// memory was kept.
func planMemories(in *Input, p *plan, used *text, maxSys int) bool {
	sep := used.runes > 0
	first := true
	for g, list := range [2][]*memory.Memory{in.ServerMemories, in.PersonalMemories} {
		personal := g == 1
		firstInGroup := true
		for i, m := range list {
			if skipMemory(in, m, personal, i) {
				continue
			}
			var line text
			if first {
				if sep {
					line.str(sectionSep)
				}
				line.str(memoryHeading)
			}
			if firstInGroup {
				line.byte('\n')
				line.str(groupHeading(personal))
			}
			line.byte('\n')
			writeMemory(&line, in, m, personal)
			if used.runes+line.runes > maxSys {
				return false
			}
			used.add(line)
			first, firstInGroup = false, false
			if personal {
				p.personalEnd = i + 1
			} else {
				p.serverEnd = i + 1
			}
		}
		if !personal {
			p.serverEnd = len(list)
		}
	}
	p.personalEnd = len(in.PersonalMemories)
	return true
}

// render writes the planned prompt, allocating each buffer once at its final size.
//
// sys is the size of the system message as planned: the plan measured the same pieces in a
// different order (short-term memory before memories), which adds up to the same size.
func render(in *Input, p *plan, msgName string, sys text, out Output) Output {
	// Prefixed turn contents are written into one buffer and each message takes a slice
	// of it: one allocation instead of one per turn.
	kept, prefixedBytes := 0, 0
	if msgName != "" {
		prefixedBytes += len(msgName) + len(namePrefixSep) + len(in.Message.Content)
	}
	for _, h := range in.History[p.historyFrom:] {
		if blank(h.Content) {
			continue
		}
		kept++
		if name := speaker(in, h); name != "" {
			prefixedBytes += len(name) + len(namePrefixSep) + len(h.Content)
		}
	}
	var prefixed string
	if prefixedBytes > 0 {
		var b strings.Builder
		b.Grow(prefixedBytes)
		for _, h := range in.History[p.historyFrom:] {
			if name := speaker(in, h); name != "" && !blank(h.Content) {
				b.WriteString(name)
				b.WriteString(namePrefixSep)
				b.WriteString(h.Content)
			}
		}
		if msgName != "" {
			b.WriteString(msgName)
			b.WriteString(namePrefixSep)
			b.WriteString(in.Message.Content)
		}
		prefixed = b.String()
	}

	n := kept + 1
	if sys.runes > 0 {
		n++
	}
	out.Messages = make([]openai.ChatCompletionMessage, 0, n)
	if sys.runes > 0 {
		var b strings.Builder
		b.Grow(sys.bytes)
		writeSystem(&text{b: &b}, in, p)
		c := b.String()
		out.Messages = append(out.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: c})
		out.Tokens += EstimateTokens(c) + MessageOverheadTokens // from the text sent, not the plan
	}
	off := 0
	content := func(name, c string) string {
		if name == "" {
			return c
		}
		end := off + len(name) + len(namePrefixSep) + len(c)
		c, off = prefixed[off:end], end
		return c
	}
	for _, h := range in.History[p.historyFrom:] {
		if blank(h.Content) {
			continue
		}
		c := content(speaker(in, h), h.Content)
		out.Messages = append(out.Messages, openai.ChatCompletionMessage{Role: chatRole(h.Role), Content: c})
		out.Tokens += EstimateTokens(c) + MessageOverheadTokens
	}
	c := content(msgName, in.Message.Content)
	out.Messages = append(out.Messages, openai.ChatCompletionMessage{Role: RoleUser, Content: c})
	out.Tokens += EstimateTokens(c) + MessageOverheadTokens

	if n := keptMemories(in, p); n > 0 {
		out.MemoryIDs = make([]int64, 0, n)
		for i, m := range in.ServerMemories[:p.serverEnd] {
			if !skipMemory(in, m, false, i) {
				out.MemoryIDs = append(out.MemoryIDs, m.ID)
			}
		}
		for i, m := range in.PersonalMemories[:p.personalEnd] {
			if !skipMemory(in, m, true, i) {
				out.MemoryIDs = append(out.MemoryIDs, m.ID)
			}
		}
	}
	return out
}
