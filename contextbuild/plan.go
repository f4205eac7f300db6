package contextbuild

import (
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// The plan's bookkeeping: which short-term messages repeat a turn, which turns and
// memories would be sent.

// planSTMKind decides what short-term memory there is to send: the summary, else the crude
// messages that do not repeat a turn sent anyway, else nothing. It notes the repeats once,
// since the plan and the render ask about them several times.
func planSTMKind(in *Input, p *plan) {
	if in.STM.Summary != "" {
		p.stm = stmSummary
		return
	}
	for i, m := range in.STM.Messages {
		if repeatsTurn(in, m) {
			if i < 64 {
				p.repeats |= 1 << i
			}
		} else {
			p.stm = stmCrude
		}
	}
}

// repeated reports whether crude message i repeats a turn.
func (p *plan) repeated(in *Input, i int) bool {
	if i < 64 {
		return p.repeats&(1<<i) != 0
	}
	return repeatsTurn(in, in.STM.Messages[i])
}

// repeatsTurn reports whether crude message m is also a History turn or the newest
// message (same role, author and content). Passive capture stores the very turns a caller
// also passes as history, and sending them twice would cost tokens and read as if every
// line had been said twice. Repeats are compared with all of History, not just the turns
// kept: history is cut oldest first and capture holds the newest messages, so the two only
// part ways when almost all history is gone.
func repeatsTurn(in *Input, m stm.Message) bool {
	same := func(t Turn) bool {
		if t.Content != m.Content || chatRole(t.Role) != string(m.Role) {
			return false
		}
		// The bot is the only assistant, so its turns match whatever ID the caller used.
		return m.Role == stm.RoleAssistant || t.AuthorID == m.AuthorID
	}
	if same(in.Message) {
		return true
	}
	for _, t := range in.History {
		if same(t) {
			return true
		}
	}
	return false
}

// anyNamedTurn reports whether some history turn will carry a name prefix.
func anyNamedTurn(in *Input) bool {
	for _, h := range in.History {
		if !blank(h.Content) && speaker(in, h) != "" {
			return true
		}
	}
	return false
}

// countTurns counts the turns that would be sent (blank ones never are).
func countTurns(turns []Turn) int {
	n := 0
	for _, h := range turns {
		if !blank(h.Content) {
			n++
		}
	}
	return n
}

// skipMemory reports whether list entry i is not a memory to send at all: nil, a
// tombstone (a forgotten memory must never reach the model, whatever the caller passed),
// or an id already listed, as when a memory is both pinned and recalled.
func skipMemory(in *Input, m *memory.Memory, personal bool, i int) bool {
	if m == nil || m.Deleted() {
		return true
	}
	if m.ID == 0 {
		return false
	}
	earlier := in.ServerMemories
	if personal {
		for _, o := range earlier {
			if o != nil && o.ID == m.ID {
				return true
			}
		}
		earlier = in.PersonalMemories
	}
	for _, o := range earlier[:i] {
		if o != nil && o.ID == m.ID {
			return true
		}
	}
	return false
}

// countMemories counts the memories that would be sent with unlimited room.
func countMemories(in *Input) int {
	p := plan{serverEnd: len(in.ServerMemories), personalEnd: len(in.PersonalMemories)}
	return keptMemories(in, &p)
}

// keptMemories counts the memories the plan keeps.
func keptMemories(in *Input, p *plan) int {
	n := 0
	for i, m := range in.ServerMemories[:p.serverEnd] {
		if !skipMemory(in, m, false, i) {
			n++
		}
	}
	for i, m := range in.PersonalMemories[:p.personalEnd] {
		if !skipMemory(in, m, true, i) {
			n++
		}
	}
	return n
}

// sameDay reports whether a and b fall on the same UTC date.
func sameDay(a, b time.Time) bool {
	ay, am, ad := a.UTC().Date()
	by, bm, bd := b.UTC().Date()
	return ay == by && am == bm && ad == bd
}
