package similar_test

import (
	"testing"

	"github.com/kioku-bot/kioku/memory/similar"
)

func TestContradicts(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"Alice likes jazz music", "Alice does not like jazz music", true},
		{"Alice likes jazz music", "Alice doesn't like jazz music", true},
		{"Alice likes jazz music", "Alice dislikes jazz music", true},
		{"Bob always joins the Friday raid", "Bob never joins the Friday raid", true},
		{"The guild bank is open to members", "The guild bank is closed to members", true},
		{"Raids start in the morning on Sundays", "Raids start in the evening on Sundays", true},
		{"Alice doesn’t eat meat at dinner", "Alice eats meat at dinner", true},
		{"Alice doesn’t eat meat", "Bob eats meat", false},                // only "meat" is shared
		{"Alice likes jazz", "Bob does not like rock", false},             // one shared word is not enough
		{"Alice likes jazz music", "Alice likes jazz music a lot", false}, // no negation, no antonym
		{"Alice does not like jazz music", "Alice does not like jazz music at all", false},
		{"Alice likes jazz music", "Alice hates jazz music", false}, // not a listed pair: likes/dislikes, love/hate
		{"アリスはジャズが好き", "アリスはジャズが嫌い", true},
		{"アリスはジャズが好き", "アリスはジャズが好きではない", true},
		{"アリスはジャズが好き", "ボブは寿司が好き", false},
		// Pairs the list learnt: allow/deny, on/off ("on" is also a stop word), and the
		// Japanese pairs, with a word that holds another taken whole.
		{"The bot may allow links in the art channel", "The bot may deny links in the art channel", true},
		{"Links are allowed in the art channel", "Links are denied in the art channel", true},
		{"Slow mode is on in the general channel", "Slow mode is off in the general channel", true},
		{"The raid is on Friday night", "Kate took Friday night off work", false}, // one shared word
		{"Voice chat recording: yes for the raid team", "Voice chat recording: no for the raid team", true},
		{"Alice has no pets at home", "Alice has pets at home", true},
		{"通知はオンにしている", "通知はオフにしている", true},
		{"画像の投稿は許可されている", "画像の投稿は拒否されている", true},
		{"ケンタは忘年会に参加する", "ケンタは忘年会に不参加", true},
		{"この機能は可能です", "この機能は不可能です", true},
		{"ログは公開されている", "ログは非公開になっている", true},
		{"ケンタは忘年会に参加する", "ケンタは忘年会に参加するよ", false},
	}
	for _, tc := range tests {
		if got := similar.Contradicts(tc.a, tc.b); got != tc.want {
			t.Errorf("Contradicts(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := similar.Contradicts(tc.b, tc.a); got != tc.want {
			t.Errorf("Contradicts(%q, %q) = %v, want %v (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}
