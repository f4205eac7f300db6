package similar_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
	"github.com/kioku-bot/kioku/memory/similar"
)

// TestCompare names each guard with a pair it must keep apart, and each reading rule with
// a pair it must bring together.
func TestCompare(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		want  bool
		apart similar.Apart
	}{
		{"SameWordsReordered", "Tom moved to Berlin last year", "Last year Tom moved to Berlin", true, ""},
		{"InflectionsAndFiller", "Sara loves bouldering", "Sara really loved bouldering", true, ""},
		{"IrregularForm", "Our streams go live at 7pm", "The stream goes live at 7pm", true, ""},
		{"Synonym", "Max hates horror movies", "Max hates horror films", true, ""},
		{"NumberWordIsItsDigit", "Yuki has two cats", "Yuki has 2 cats", true, ""},
		{"OneWordMore", "Aiden is vegetarian", "Aiden is a strict vegetarian", true, ""},
		{"KanjiRunWrittenTogether", "ユキは猫を2匹飼っている", "ユキは2匹の猫を飼っている", true, ""},
		{"KatakanaCompound", "ケンジはピーナッツアレルギーがある", "ケンジはピーナッツのアレルギーがある", true, ""},
		{"PoliteForm", "ハナはバイオリンを弾く", "ハナはバイオリンを弾きます", true, ""},
		{"Substitution", "Alice prefers tea", "Alice prefers coffee", false, similar.ApartWording},
		{"OtherNumber", "The server has 150 members", "The server has 1500 members", false, similar.ApartNumber},
		{"OtherNumberWord", "Yuki has two cats", "Yuki has three cats", false, similar.ApartNumber},
		{"NumberAdded", "Movie night is on Saturday", "Movie night is on Saturday at 8pm", false, similar.ApartNumber},
		{"OtherDay", "The raid is on Friday", "The raid is on Saturday", false, similar.ApartDay},
		{"OtherMonth", "The deadline is June 30", "The deadline is July 30", false, similar.ApartDay},
		{"OtherDayJapanese", "配信は火曜日の19時から", "配信は木曜日の19時から", false, similar.ApartDay},
		{"OtherDateJapanese", "ミアの誕生日は3月3日", "ミアの誕生日は3月13日", false, similar.ApartNumber},
		{"KanjiNumeral", "ユキは猫を二匹飼っている", "ユキは猫を三匹飼っている", false, similar.ApartNumber},
		{"NameAdded", "Alice prefers tea", "Alice and Bob prefer tea", false, similar.ApartName},
		{"RelationAdded", "Alice likes jazz", "Alice's sister likes jazz", false, similar.ApartName},
		{"RelationAddedJapanese", "アリスはジャズが好き", "アリスの妹はジャズが好き", false, similar.ApartName},
		{"Negation", "Carlos eats meat", "Carlos doesn't eat meat", false, similar.ApartNegation},
		{"NegationJapanese", "ニナはオフ会に来る", "ニナはオフ会に来ない", false, similar.ApartNegation},
		{"Antonym", "Slow mode is on in #general", "Slow mode is off in #general", false, similar.ApartAntonym},
		{"AntonymJapanese", "ログは公開されている", "ログは非公開になっている", false, similar.ApartAntonym},
		{"Unrelated", "Alice prefers tea", "The raid starts at 9pm", false, similar.ApartNumber},
		{"FewWordsShared", "Ravi runs the Tuesday raids", "Ravi runs marathons on Tuesday", false, similar.ApartWording},
		{"TooMuchAdded", "Alice likes tea", "Alice likes tea with milk and honey in winter mornings", false, similar.ApartOverlap},
		{"Empty", "", "", false, similar.ApartOverlap},
		{"Punctuation", "!!!", "?", false, similar.ApartOverlap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ab := range [][2]string{{tt.a, tt.b}, {tt.b, tt.a}} {
				v := similar.Compare(ab[0], ab[1])
				if v.Similar != tt.want || v.Apart != tt.apart {
					t.Errorf("Compare(%q, %q) = %+v, want similar=%v apart=%q", ab[0], ab[1], v, tt.want, tt.apart)
				}
			}
		})
	}
}

// TestCompareCosine: a high cosine lets one substituted word through, never a changed name,
// number, day, negation or antonym, and a low one changes nothing Compare says.
func TestCompareCosine(t *testing.T) {
	const high = similar.CosineThreshold
	if v := similar.CompareCosine("Leo drinks his coffee black", "Leo takes his coffee black", high); !v.Similar {
		t.Errorf("one word reworded at cosine %.2f: %+v, want similar", high, v)
	}
	if v := similar.CompareCosine("Leo drinks his coffee black", "Leo takes his coffee black", high-0.01); v.Similar {
		t.Errorf("one word reworded under the threshold: %+v, want apart", v)
	}
	for _, ab := range [][2]string{
		{"Ravi is the guild leader", "Sara is the guild leader"},
		{"The raid is on Friday", "The raid is on Saturday"},
		{"Yuki has two cats", "Yuki has three cats"},
		{"Carlos eats meat", "Carlos doesn't eat meat"},
		{"Max likes horror movies", "Max dislikes horror movies"},
		{"Alice likes jazz", "Alice's sister likes jazz"},
		{"Kenji plays tennis on weekends with his brother", "Sara reads novels in the evening"},
	} {
		if v := similar.CompareCosine(ab[0], ab[1], 1); v.Similar {
			t.Errorf("CompareCosine(%q, %q, 1) = %+v, want apart", ab[0], ab[1], v)
		}
	}
}

// TestCompareLongText: a memory of the longest allowed size compares with itself and with
// a paraphrase without trouble.
func TestCompareLongText(t *testing.T) {
	long := strings.Repeat("The guild keeps raid notes for every dungeon boss. ", 40)[:2000]
	if v := similar.Compare(long, long); !v.Similar || v.Score != 1 {
		t.Errorf("a long memory against itself: %+v", v)
	}
}

// TestAgainstReadsRelativeDays: the same words naming a relative day said on different
// days are two statements; said on the same day, one.
func TestAgainstReadsRelativeDays(t *testing.T) {
	june := time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)
	w, ok := recall.ReferredDate("The guild meetup is tomorrow evening", june)
	if !ok {
		t.Fatal("the date reader does not read tomorrow")
	}
	stored := &memory.Memory{Content: "The guild meetup is tomorrow evening", RefersTo: w.From, RefersToEnd: w.To}
	if v := similar.Against("The guild meetup is tomorrow evening", june.AddDate(0, 3, 0), stored, 0); v.Similar || v.Apart != similar.ApartDay {
		t.Errorf("said three months later: %+v, want apart by day", v)
	}
	if v := similar.Against("The guild meetup is tomorrow in the evening", june, stored, 0); !v.Similar {
		t.Errorf("said the same day: %+v, want similar", v)
	}
	if v := similar.Against("Kenji has a peanut allergy", june, &memory.Memory{Content: "Kenji is allergic to peanuts"}, 0); !v.Similar {
		t.Errorf("a pair naming no day: %+v", v)
	}
}
