package recall

import (
	"slices"
	"strings"
	"testing"
)

func TestAssocTerms(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"Nouns", "Kenji brings Catan to game night", []string{"kenji", "brings", "catan", "game", "night"}},
		{"StopWordsAndShortWords", "We are at it on the go", nil},
		{"Repeats", "Catan, Catan and more Catan", []string{"catan"}},
		{"NumbersAlone", "The 2026 raid at 9pm", []string{"raid", "9pm"}},
		{"Folded", "ＣＡＴＡＮ night", []string{"catan", "night"}},
		{"Katakana", "週末にキャンプへ行った", []string{"週末", "キャンプ"}},
		{"LongVowel", "ケーキを焼いた", []string{"ケーキ"}},
		{"LongKanjiRun", "今日内示出た。4月から福岡", []string{"福岡"}},
		{"Mixed", "Aikoは京都でラーメン", []string{"京都", "ラーメン", "aiko"}},
		{"OneKanji", "猫が好き", nil},
	} {
		if got := AssocTerms(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: AssocTerms(%q) = %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

func TestAssocTermsBound(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike")
	got := AssocTerms(strings.Join(words, " "))
	if !slices.Equal(got, words[:MaxAssocTerms]) {
		t.Errorf("a long memory takes part with %q, want its first %d words %q", got, MaxAssocTerms, words[:MaxAssocTerms])
	}
	if q := QueryAssocTerms(strings.Join(words, " ")); len(q) != len(words) {
		t.Errorf("a question's words are not bounded like a memory's: %q", q)
	}
}
