package recall

import (
	"slices"
	"testing"
)

func TestNameMatches(t *testing.T) {
	for _, c := range []struct {
		q, w string
		want bool
	}{
		{"kate", "katherine", true}, {"katya", "katia", true}, {"dima", "dmitri", true},
		{"pri", "priyanka", true}, {"zoe", "zoe", true}, {"tom", "tomtom", true},
		{"kate", "liu", false}, {"bo", "bob", false}, {"marcus", "marco", false}, {"anna", "anne", false},
	} {
		if got := NameMatches(c.q, c.w); got != c.want {
			t.Errorf("NameMatches(%q, %q) = %v, want %v", c.q, c.w, got, c.want)
		}
	}
	if got := queryNames("What games does Zoë's brother play on Saturday?"); len(got) != 1 || got[0] != "zoe" {
		t.Errorf("queryNames = %v, want [zoe]", got)
	}
}

func TestJapaneseNames(t *testing.T) {
	for q, want := range map[string][]string{
		"けんちゃんはどこに転勤になったの?":        {"けん"},
		"みおっちが台湾で絶対行きたいって言ってた場所は?": {"みお"},
		"ダイが初めてソロキャンプしたのはどこ?":      {"だい"},
		"送別会をやったお店の名前は?":           nil,
	} {
		got := japaneseNames(q)
		if !slices.Equal(got, want) {
			t.Errorf("japaneseNames(%q) = %q, want %q", q, got, want)
		}
	}
	for _, c := range []struct {
		q, author string
		want      bool
	}{
		{"けん", "kenta_m", true},
		{"みお", "Mio.N", true},
		{"だい", "ダイスケ", true},
		{"だい", "kenta_m", false},
		{"けん", "ダイスケ", false},
		{"ゆい", "さくら🌸", false},
	} {
		got := false
		for _, w := range nameWords(c.author) {
			got = got || NameMatches(c.q, w)
		}
		if got != c.want {
			t.Errorf("%q names %q: %v, want %v", c.q, c.author, got, c.want)
		}
	}
}
