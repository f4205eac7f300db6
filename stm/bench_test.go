package stm_test

import (
	"fmt"
	"testing"

	"github.com/kioku-bot/kioku/stm"
)

// BenchmarkAppendContext measures one captured message plus one context read,
// the store's work per chat turn, across key counts below, at and above the
// default capacity so the eviction path shows.
func BenchmarkAppendContext(b *testing.B) {
	for _, keys := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			s, _ := MustNew(b, stm.Options{})
			ks := make([]stm.Key, keys)
			for i := range ks {
				ks[i] = stm.UserKey("g", fmt.Sprintf("c%d", i%1000), fmt.Sprintf("u%d", i))
			}
			msg := stm.Message{AuthorID: "u", AuthorName: "name", Role: stm.RoleUser, Content: "a typical short chat message"}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				key := ks[i%keys]
				i++
				if err := s.Append(key, msg); err != nil {
					b.Fatal(err)
				}
				if s.Context(key).IsZero() {
					b.Fatal("empty context after append")
				}
			}
		})
	}
}
