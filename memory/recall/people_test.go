package recall

import "testing"

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
