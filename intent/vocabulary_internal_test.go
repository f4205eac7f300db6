package intent

import "testing"

// TestVocabularyLookup checks that every word of the table is found again by
// the scanner's lookup, so a misspelt or missing entry fails here rather than
// silently never matching.
func TestVocabularyLookup(t *testing.T) {
	seen := make(map[string]word)
	for w := wA; w < numWords; w++ {
		text := vocabulary[w].text
		if text == "" || len(text) > maxWordLen {
			t.Fatalf("word %d has spelling %q", w, text)
		}
		if prev, ok := seen[text]; ok {
			t.Fatalf("%q is both word %d and word %d", text, prev, w)
		}
		seen[text] = w
		var key [maxWordLen]byte
		copy(key[:], text)
		if got := lookupWord(&key, len(text)); got != w {
			t.Errorf("lookupWord(%q) = %d, want %d", text, got, w)
		}
	}
	for _, text := range []string{"remembe", "rememberr", "zzz", "conversationss"} {
		var key [maxWordLen]byte
		copy(key[:], text)
		if got := lookupWord(&key, len(text)); got != wOther {
			t.Errorf("lookupWord(%q) = %d, want wOther", text, got)
		}
	}
}
