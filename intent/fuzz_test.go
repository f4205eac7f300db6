package intent_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/intent"
)

// verdict is everything the gate says about one text.
type verdict struct {
	phrase   string
	explicit bool
	signal   bool
}

func judge(s string) verdict {
	p, ok := intent.ExplicitPhrase(s)
	return verdict{phrase: p, explicit: ok, signal: intent.HighSignal(s)}
}

// englishPhrases are the English explicit-intent phrases, as words. Gluing
// letters to the first and last word makes them parts of longer words
// ("xremember", "notebook"), which must read like any unknown word.
var englishPhrases = [][]string{
	{"remember"}, {"Remember", "that"}, {"note"}, {"note:"}, {"forget"},
	{"don't", "forget"}, {"don’t", "forget"}, {"do", "not", "forget"}, {"never", "forget"},
	{"take", "note"}, {"make", "a", "note"}, {"commit", "to", "memory"},
	{"for", "future", "conversations"}, {"for", "future", "reference"},
	{"decided", "to"}, {"from", "now", "on"}, {"prefer"}, {"favorite"},
}

// glues are what may stick to a phrase word to make it part of a longer
// word: letters and digits, in ASCII and beyond, but never a whole
// vocabulary word.
var glues = []string{"", "x", "zq", "9", "é", "ß", "book", "ꝏ", "Ｘ"}

// FuzzExplicit checks the intent gate on arbitrary text: it never panics;
// Normalize is idempotent and collapses white space; Explicit agrees with
// ExplicitPhrase and implies HighSignal; the verdict is the same for the text, for its normalized form, for the
// text with its white space changed and, for ASCII text, in upper case and in
// full width; and an English phrase glued inside a longer word reads like
// any other unknown word.
func FuzzExplicit(f *testing.F) {
	for _, tt := range explicitMatches {
		f.Add(tt.text, tt.text, uint8(0), uint8(1))
	}
	for _, tt := range explicitNonMatches {
		f.Add(tt.text, "ok", uint8(3), uint8(2))
	}
	for _, s := range highSignalMatches {
		f.Add(s, "", uint8(5), uint8(6))
	}
	f.Add("ok so", "my cat is Momo", uint8(1), uint8(0x31))
	f.Add("please", "this: I'm vegan", uint8(2), uint8(0x20))
	f.Add("I", "when we met?", uint8(4), uint8(0x13))
	f.Add("これ", "覚えておいてね", uint8(0), uint8(0x44))
	f.Add("", "", uint8(9), uint8(0x70))
	f.Add("a\xffb", "\u3000\u00a0", uint8(7), uint8(0x12))
	f.Add("a\xffb\u0301 \u00a8\u3000İ", "", uint8(8), uint8(0x05))
	f.Add("\u02bc \u02bcx y\u02bc", "remember", uint8(10), uint8(0x87)) // U+02BC is a letter to Unicode but an apostrophe here
	f.Fuzz(func(t *testing.T, before, after string, which, glue uint8) {
		for _, s := range []string{before, before + " " + after} {
			checkNormalForms(t, s)
		}
		words := englishPhrases[int(which)%len(englishPhrases)]
		pre, suf := glues[int(glue&0x0f)%len(glues)], glues[int(glue>>4)%len(glues)]
		if pre == "" && suf == "" {
			suf = "x"
		}
		glued := gluePhrase(words, pre, suf, false)
		control := gluePhrase(words, pre, suf, true)
		a := before + " " + strings.Join(glued, " ") + " " + after
		b := before + " " + strings.Join(control, " ") + " " + after
		if ga, gb := judge(a), judge(b); ga != gb {
			t.Errorf("a phrase inside a longer word changed the verdict:\n%q: %+v\n%q: %+v", a, ga, b, gb)
		}
	})
}

// gluePhrase returns words with pre glued to the first word and suf to the
// last; with control, each word that gets glue is replaced by "zz" first, a
// word the vocabulary does not know.
func gluePhrase(words []string, pre, suf string, control bool) []string {
	out := append([]string(nil), words...)
	first, last := 0, len(out)-1
	colon := strings.HasSuffix(words[last], ":")
	if colon {
		out[last] = strings.TrimSuffix(out[last], ":")
	}
	if control {
		if pre != "" {
			out[first] = "zz"
		}
		if suf != "" {
			out[last] = "zz"
		}
	}
	out[first] = pre + out[first]
	out[last] += suf
	if colon {
		out[last] += ":"
	}
	return out
}

// checkNormalForms checks that s and the forms that normalize like it get
// one verdict.
func checkNormalForms(t *testing.T, s string) {
	t.Helper()
	n := intent.Normalize(s)
	if again := intent.Normalize(n); again != n {
		t.Fatalf("Normalize is not idempotent: %q → %q → %q", s, n, again)
	}
	if !utf8.ValidString(n) {
		t.Fatalf("Normalize(%q) = %q is not valid UTF-8", s, n)
	}
	if n != strings.TrimSpace(n) || strings.Contains(n, "  ") {
		t.Fatalf("Normalize(%q) = %q keeps white space it should collapse", s, n)
	}
	want := judge(s)
	if want.explicit != intent.Explicit(s) {
		t.Fatalf("Explicit(%q) disagrees with ExplicitPhrase", s)
	}
	if want.explicit && !want.signal {
		t.Fatalf("Explicit(%q) but not HighSignal", s)
	}
	forms := []string{
		n,
		"\n\t" + strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " \u3000\r\n") + " \u00a0",
	}
	if isASCII(s) {
		forms = append(forms, strings.ToUpper(s), fullWidth(s))
	}
	for _, form := range forms {
		if got := judge(form); got != want {
			t.Errorf("verdict differs between equivalent texts:\n%q: %+v\n%q: %+v", s, want, form, got)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// fullWidth writes the printable ASCII of s in its full-width forms and the
// space as the ideographic space, which NFKC maps back.
func fullWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ':
			b.WriteRune('\u3000')
		case '!' <= r && r <= '~':
			b.WriteRune(r - '!' + '！')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
