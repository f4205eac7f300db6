package bot_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/bot"
)

// checkChunks asserts the invariants every split must keep.
func checkChunks(t *testing.T, chunks []string, limit int) {
	t.Helper()
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > limit {
			t.Errorf("chunk %d has %d runes, limit %d", i, n, limit)
		}
		if strings.TrimSpace(c) == "" {
			t.Errorf("chunk %d is blank", i)
		}
		if !utf8.ValidString(c) {
			t.Errorf("chunk %d is not valid UTF-8 (a rune was cut)", i)
		}
	}
}

func TestSplitMessage(t *testing.T) {
	t.Run("ShortTextIsOneMessage", func(t *testing.T) {
		got := bot.SplitMessage("hello\n", bot.MaxMessageRunes)
		if len(got) != 1 || got[0] != "hello" {
			t.Errorf("got %q", got)
		}
	})

	t.Run("BlankTextIsNoMessage", func(t *testing.T) {
		if got := bot.SplitMessage(" \n\t ", bot.MaxMessageRunes); len(got) != 0 {
			t.Errorf("got %q", got)
		}
	})

	t.Run("ExactlyTheLimitIsOneMessage", func(t *testing.T) {
		text := strings.Repeat("a", bot.MaxMessageRunes)
		if got := bot.SplitMessage(text, bot.MaxMessageRunes); len(got) != 1 {
			t.Errorf("got %d chunks", len(got))
		}
	})

	t.Run("PrefersParagraphs", func(t *testing.T) {
		para := strings.Repeat("word ", 60) // 300 runes
		text := para + "\n\n" + para + "\n\n" + para
		got := bot.SplitMessage(text, 700)
		checkChunks(t, got, 700)
		if len(got) != 2 || !strings.HasSuffix(got[0], "word") || strings.HasPrefix(got[1], "\n") {
			t.Errorf("got %q", got)
		}
		if strings.Count(got[0], "\n\n") != 1 {
			t.Errorf("first chunk should end at the second paragraph break: %q", got[0])
		}
	})

	t.Run("PrefersSentencesOverSpaces", func(t *testing.T) {
		sentence := strings.Repeat("x", 90) + " ends here. "
		text := strings.Repeat(sentence, 30)
		got := bot.SplitMessage(text, 1000)
		checkChunks(t, got, 1000)
		for _, c := range got[:len(got)-1] {
			if !strings.HasSuffix(c, "ends here.") {
				t.Errorf("chunk does not end at a sentence: …%q", c[len(c)-20:])
			}
		}
		if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(text), " ") {
			t.Error("words were lost or changed")
		}
	})

	t.Run("DecimalPointIsNoSentenceEnd", func(t *testing.T) {
		text := strings.Repeat("pi is 3.14159 and e is 2.71828 ", 80)
		for _, c := range bot.SplitMessage(text, 500) {
			if strings.HasSuffix(c, "3.") || strings.HasSuffix(c, "2.") {
				t.Errorf("cut inside a number: …%q", c[len(c)-10:])
			}
		}
	})

	t.Run("JapaneseWithoutSpaces", func(t *testing.T) {
		sentence := strings.Repeat("記憶", 40) + "です。" // 83 runes, no spaces
		text := strings.Repeat(sentence, 60)
		got := bot.SplitMessage(text, bot.MaxMessageRunes)
		checkChunks(t, got, bot.MaxMessageRunes)
		if len(got) < 3 {
			t.Fatalf("got %d chunks for %d runes", len(got), utf8.RuneCountInString(text))
		}
		for _, c := range got {
			if !strings.HasSuffix(c, "。") {
				t.Errorf("chunk does not end at 。: …%q", string([]rune(c)[utf8.RuneCountInString(c)-5:]))
			}
		}
		if strings.Join(got, "") != text {
			t.Error("text changed by splitting")
		}
	})

	t.Run("NoBoundaryCutsHard", func(t *testing.T) {
		text := strings.Repeat("あ", 4500)
		got := bot.SplitMessage(text, bot.MaxMessageRunes)
		checkChunks(t, got, bot.MaxMessageRunes)
		if strings.Join(got, "") != text {
			t.Error("text changed by splitting")
		}
	})

	t.Run("CodeFenceIsClosedAndReopened", func(t *testing.T) {
		var code strings.Builder
		for i := range 200 {
			code.WriteString("fmt.Println(\"line ")
			code.WriteString(strings.Repeat("x", i%7))
			code.WriteString("\")\n")
		}
		text := "Here is the program:\n```go\n" + code.String() + "```\nThat's all."
		got := bot.SplitMessage(text, 1000)
		checkChunks(t, got, 1000)
		if len(got) < 2 {
			t.Fatalf("got %d chunks", len(got))
		}
		for i, c := range got {
			if strings.Count(c, "```")%2 != 0 {
				t.Errorf("chunk %d leaves a code block open:\n%s", i, c)
			}
			if i > 0 && i < len(got)-1 && !strings.HasPrefix(c, "```go\n") {
				t.Errorf("chunk %d does not reopen the go block: %q", i, c[:min(20, len(c))])
			}
		}
		if !strings.HasSuffix(got[len(got)-1], "That's all.") {
			t.Errorf("last chunk = %q", got[len(got)-1])
		}
	})
}
