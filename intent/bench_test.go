package intent_test

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/intent"
)

// benchMessages are typical chat turns. The long one is near Discord's 2000
// character limit and matches nothing, so every word is scanned.
var benchMessages = []struct{ name, text string }{
	{"ShortASCII", "hey, can you remember that my cat is called Momo?"},
	{"LongASCII", longASCII()},
	{"Japanese", "明日の会議は10時からだから、これ覚えておいてね！"},
	{"JapaneseNormalized", "明日の会議は10時からだから、これ覚えておいてね"},
}

func longASCII() string {
	const sentence = "So yesterday we talked through the migration plan again and the staging database is still slow, " +
		"which makes the test suite take forever; Bob thinks the index on the events table is missing. "
	s := strings.Repeat(sentence, 1500/len(sentence)+1)
	return s[:1500]
}

func BenchmarkExplicit(b *testing.B) {
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(m.text)))
			for b.Loop() {
				intent.Explicit(m.text)
			}
		})
	}
}

func BenchmarkHighSignal(b *testing.B) {
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(m.text)))
			for b.Loop() {
				intent.HighSignal(m.text)
			}
		})
	}
}

func BenchmarkNormalize(b *testing.B) {
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(m.text)))
			for b.Loop() {
				intent.Normalize(m.text)
			}
		})
	}
}
