package contextbuild_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/contextbuild"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
)

// benchInput is a busy guild turn: memories split between server and three participants'
// personal ones, a full crude short-term memory and turns alternating between people and
// the bot.
func benchInput(memories, turns, budget int) contextbuild.Input {
	names := []string{"Alice", "ボブ", "Carol"}
	in := contextbuild.Input{
		System:         persona,
		Instructions:   []string{nudge},
		PersonalOwners: map[string]string{"u0": "Alice", "u1": "ボブ", "u2": "Carol"},
		Message:        userTurn("u0", "Alice", "So what did we decide about Friday?"),
		Budget:         budget,
		Now:            now,
	}
	for i := range memories {
		content := fmt.Sprintf("Memory %d: the group agreed that game night moves to Friday at 21:00 JST %s", i, strings.Repeat("and more detail ", i%5))
		if i%2 == 0 {
			in.ServerMemories = append(in.ServerMemories, serverMem(int64(i+1), memory.TypeDecision, content, day(1+i%13)))
		} else {
			in.PersonalMemories = append(in.PersonalMemories, personalMem(int64(i+1), fmt.Sprintf("u%d", i%3), memory.TypePreference, content, day(1+i%13)))
		}
	}
	for i := range stm.MaxMessages {
		in.STM.Messages = append(in.STM.Messages, stm.Message{
			AuthorID: "u2", AuthorName: "Carol", Role: stm.RoleUser,
			Content: fmt.Sprintf("earlier message %d about the raid schedule", i), SentAt: now.Add(-time.Duration(60-i) * time.Minute),
		})
	}
	for i := range turns {
		if i%2 == 1 {
			in.History = append(in.History, botTurn(fmt.Sprintf("Reply %d: sure, Friday works, I will remember that.", i)))
			continue
		}
		n := i / 2 % 3
		in.History = append(in.History, userTurn(fmt.Sprintf("u%d", n), names[n], fmt.Sprintf("Turn %d: what about the raid on Saturday, does that still work for everyone?", i)))
	}
	return in
}

// BenchmarkBuild measures one turn's prompt assembly, which runs on every message: with
// everything fitting, with the budget cutting history, and at larger sizes so growth shows.
func BenchmarkBuild(b *testing.B) {
	for _, bc := range []struct {
		name                    string
		memories, turns, budget int
	}{
		{"memories=30/turns=50/fits", 30, 50, contextbuild.Budget(16384, 1024)},
		{"memories=30/turns=50/cut", 30, 50, 2000},
		{"memories=100/turns=200/fits", 100, 200, contextbuild.Budget(128000, 4096)},
		{"memories=100/turns=200/cut", 100, 200, 6000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := benchInput(bc.memories, bc.turns, bc.budget)
			b.ReportAllocs()
			var out contextbuild.Output
			for b.Loop() {
				out = contextbuild.Build(in)
			}
			b.ReportMetric(float64(out.Tokens), "tokens")
			b.ReportMetric(float64(out.DroppedTurns), "dropped-turns")
		})
	}
}
