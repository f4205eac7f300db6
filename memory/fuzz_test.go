package memory_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// FuzzNormalize checks the storage and dedup forms on arbitrary text: the storage form
// (CollapseSpace) is valid UTF-8 without control characters, with single inner spaces and
// nothing to trim, and stays
// as it is when collapsed again; the dedup form (Normalize) is idempotent, has no white
// space to trim or collapse and no trailing punctuation; the hash is the same for a text,
// its storage form and its dedup form; valid UTF-8 stays valid through SearchText.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", " ", "I prefer green tea.", "  I   prefer\tgreen\n\ntea  ", "Ｉ ｐｒｅｆｅｒ ＧＲＥＥＮ ｔｅａ！",
		"緑茶が\u3000好き。", "v1.2, then v2.", "...", "!!!", "a\xffb", "e\u0301", "İstanbul", "ǅ", "ﬁ①",
		"\u2474 item", "㍻ era", "明日のdeployは", "\u0085\u2028\u2029", "ß ẞ K Ω",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stored := memory.CollapseSpace(s)
		checkCollapsed(t, "CollapseSpace", s, stored)
		if again := memory.CollapseSpace(stored); again != stored {
			t.Fatalf("CollapseSpace is not idempotent: %q → %q → %q", s, stored, again)
		}

		n := memory.Normalize(s)
		if again := memory.Normalize(n); again != n {
			t.Fatalf("Normalize is not idempotent: %q → %q → %q", s, n, again)
		}
		checkCollapsed(t, "Normalize", s, n)
		if last, _ := utf8.DecodeLastRuneInString(n); n != "" && unicode.IsPunct(last) {
			t.Fatalf("Normalize(%q) = %q ends in punctuation", s, n)
		}
		if memory.Normalize(stored) != n {
			t.Fatalf("Normalize of the storage form %q differs from Normalize(%q) = %q", stored, s, n)
		}

		h := memory.Hash(s)
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("Hash(%q) = %q is not a hex SHA-256", s, h)
		}
		if memory.Hash(stored) != h {
			t.Fatalf("Hash of the storage form %q differs from Hash(%q)", stored, s)
		}
		if n != "" && memory.Hash(n) != h {
			t.Fatalf("Hash of the dedup form %q differs from Hash(%q)", n, s)
		}
		if n != "" && h != sha256Hex(n) {
			t.Fatalf("Hash(%q) is not the SHA-256 of its dedup form %q", s, n)
		}

		if utf8.ValidString(s) {
			if st := memory.SearchText(s); !utf8.ValidString(st) {
				t.Fatalf("SearchText(%q) = %q is not valid UTF-8", s, st)
			}
		}
	})
}

// checkCollapsed fails unless out is valid UTF-8 without control characters, whose only
// white space is single ASCII spaces between other characters.
func checkCollapsed(t *testing.T, fn, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q is not valid UTF-8", fn, in, out)
	}
	prevSpace := true // a leading space counts as doubled
	for _, r := range out {
		if unicode.IsControl(r) {
			t.Fatalf("%s(%q) = %q keeps a control character", fn, in, out)
		}
		space := unicode.IsSpace(r)
		if space && (r != ' ' || prevSpace) {
			t.Fatalf("%s(%q) = %q has leading, doubled or non-ASCII white space", fn, in, out)
		}
		prevSpace = space
	}
	if out != "" && prevSpace {
		t.Fatalf("%s(%q) = %q has trailing white space", fn, in, out)
	}
}

// FuzzSecrets checks that detection and redaction agree on arbitrary bytes: a redacted
// text holds no detectable secret, a text without one is left exactly as it is, a text
// with one changes and names the kind detected, and redacting twice changes nothing.
func FuzzSecrets(f *testing.F) {
	for _, c := range secretCases {
		for _, p := range c.positives {
			f.Add(p.in)
		}
		for _, n := range c.negatives {
			f.Add(n)
		}
	}
	for _, s := range []string{
		"", "DB_PASSWORD=[redacted password]", "password=hunter2hunter2 and token: abcd1234efgh",
		"[redacted password] password=[redacted x", "パスワード：Fake0pass", "a\xff password=\xffFAKE0123",
		"-----BEGIN PRIVATE KEY-----", "Authorization: Bearer FAKEfake0123456789FAKE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, found := memory.DetectSecret(s)
		red := memory.RedactSecrets(s)
		if k, ok := memory.DetectSecret(red); ok {
			t.Fatalf("RedactSecrets(%q) = %q still holds a %s", s, red, k)
		}
		if again := memory.RedactSecrets(red); again != red {
			t.Fatalf("RedactSecrets is not idempotent: %q → %q → %q", s, red, again)
		}
		if !found {
			if red != s {
				t.Fatalf("RedactSecrets changed %q, where DetectSecret finds nothing, into %q", s, red)
			}
			return
		}
		if kind == "" {
			t.Fatalf("DetectSecret(%q) found a secret of no kind", s)
		}
		if marker := "[redacted " + kind + "]"; !strings.Contains(red, marker) {
			t.Fatalf("DetectSecret(%q) found a %s but RedactSecrets gave %q, without %q", s, kind, red, marker)
		}
	})
}
