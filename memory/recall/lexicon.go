package recall

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// LexiconVersion is the version of the concept lexicon below; it changes whenever a
// category or member is added or removed, so measurements can name the table they ran on.
const LexiconVersion = 1

// concept is one everyday category: the words that name it in a question (cues) and the
// words of memories that belong to it (members). English cues and members are whole
// lowercase words or phrases; Japanese ones are matched inside the question's CJK runs.
type concept struct {
	cues, members []string
}

// Cues are category nouns as a question asks for the category ("hobbies", "what sports",
// "any pets"), not as it names one thing ("game night", "the band", "the new job"): those
// already match their memories by their own words, and expanding them only adds noise.
//
// lexicon is the curated concept table: "What are Kate's hobbies?" looks for bouldering,
// knitting or photography, none of which says "hobby". Members are chosen to be specific
// (a word that names the category's things, not a word that merely co-occurs with it), so
// the expansion stays a precise second net.
var lexicon = []concept{
	{ // hobbies
		cues: []string{"hobby", "hobbies", "pastime", "pastimes", "趣味"},
		members: []string{"bouldering", "climbing", "painting", "knitting", "hiking", "photography", "gardening",
			"fishing", "cooking", "baking", "drawing", "pottery", "sewing", "camping", "surfing", "yoga",
			"chess", "guitar", "piano", "dancing", "writing", "reading", "woodworking", "crafts",
			"登山", "釣り", "料理", "写真", "ガーデニング", "編み物", "絵を描", "キャンプ", "ボルダリング", "読書", "ギター", "ピアノ"},
	},
	{ // sports
		cues: []string{"sport", "sports", "athletic", "スポーツ", "運動"},
		members: []string{"soccer", "football", "basketball", "baseball", "tennis", "volleyball", "swimming",
			"running", "cycling", "golf", "rugby", "hockey", "skiing", "snowboarding", "boxing", "marathon",
			"climbing", "bouldering", "badminton", "yoga", "gym",
			"サッカー", "野球", "テニス", "バスケ", "バレー", "水泳", "ランニング", "ゴルフ", "スキー", "マラソン", "ジム", "卓球"},
	},
	{ // games
		cues: []string{"games", "gaming", "videogames", "ゲーム"},
		members: []string{"minecraft", "zelda", "pokemon", "mario", "fortnite", "chess", "poker", "nintendo",
			"playstation", "xbox", "steam", "switch", "boardgame", "rpg",
			"ポケモン", "ゼルダ", "マリオ", "スイッチ", "将棋", "麻雀", "囲碁"},
	},
	{ // films
		cues: []string{"films", "movies", "cinema", "映画"},
		members: []string{"watched", "theater", "theatre", "netflix", "trailer", "director", "documentary",
			"anime", "sequel", "premiere",
			"映画館", "アニメ", "監督", "ドラマ"},
	},
	{ // books
		cues: []string{"books", "novels", "読書", "小説"},
		members: []string{"novel", "author", "chapter", "library", "fiction", "manga", "poetry", "biography",
			"read", "reading",
			"小説", "漫画", "マンガ", "図書館", "作家", "読ん"},
	},
	{ // music
		cues: []string{"music", "musical", "bands", "音楽"},
		members: []string{"concert", "album", "guitar", "piano", "violin", "drums", "singing", "playlist",
			"band", "song", "jazz", "rock", "spotify", "festival",
			"ライブ", "コンサート", "アルバム", "ギター", "ピアノ", "バンド", "歌う"},
	},
	{ // food
		cues: []string{"food", "foods", "cuisine", "dishes", "meals", "食べ物", "料理", "食事"},
		members: []string{"pizza", "sushi", "ramen", "pasta", "curry", "tacos", "burger", "salad", "steak",
			"noodles", "dessert", "cake", "vegan", "vegetarian", "restaurant", "recipe",
			"寿司", "ラーメン", "カレー", "パスタ", "焼肉", "うどん", "そば", "ケーキ", "レストラン"},
	},
	{ // travel
		cues: []string{"travel", "travels", "traveled", "travelled", "trips", "vacations", "holidays",
			"旅行"},
		members: []string{"flight", "flew", "airport", "hotel", "beach", "abroad", "visited", "trip", "tour",
			"passport", "roadtrip", "cruise",
			"旅行", "飛行機", "空港", "ホテル", "温泉", "観光", "海外"},
	},
	{ // pets
		cues: []string{"pet", "pets", "animals", "ペット", "動物"},
		members: []string{"dog", "dogs", "cat", "cats", "puppy", "kitten", "hamster", "rabbit", "parrot",
			"fish", "turtle", "vet",
			"犬を", "犬が", "猫を", "猫が", "飼って", "ハムスター", "うさぎ", "インコ", "金魚"},
	},
	{ // work
		cues: []string{"jobs", "career", "occupation", "profession", "職業"},
		members: []string{"office", "manager", "boss", "coworker", "colleague", "promotion", "salary",
			"interview", "hired", "startup", "company", "shift",
			"会社", "上司", "同僚", "職場", "転職", "残業", "面接"},
	},
	{ // family
		cues: []string{"family", "families", "relatives", "家族"},
		members: []string{"mom", "mother", "dad", "father", "sister", "brother", "son", "daughter", "wife",
			"husband", "kids", "children", "grandma", "grandmother", "grandpa", "parents", "cousin",
			"母親", "父親", "お母さん", "お父さん", "兄弟", "姉妹", "息子", "娘が", "妻が", "夫が", "子供", "祖母", "祖父", "両親"},
	},
	{ // health
		cues: []string{"health", "illness", "illnesses", "健康", "体調", "病気"},
		members: []string{"doctor", "hospital", "sick", "flu", "cold", "injury", "surgery", "allergy",
			"diet", "exercise", "therapy", "medication", "sleep",
			"病院", "医者", "風邪", "怪我", "手術", "アレルギー", "薬を", "入院"},
	},
}

// expandConcepts returns the members of every category the question names by a cue (words
// are its lowercase words, cjk its CJK runs), without the question's own words and without
// repeats; nil when it names none.
func expandConcepts(words, cjk []string) []string {
	own := map[string]bool{}
	for _, w := range words {
		own[w] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range lexicon {
		if !namesConcept(c, own, cjk) {
			continue
		}
		for _, m := range c.members {
			m = norm.NFKC.String(m)
			if !seen[m] && !own[m] && !inRuns(cjk, m) {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

func namesConcept(c concept, own map[string]bool, cjk []string) bool {
	for _, cue := range c.cues {
		if isCJKWord(cue) {
			if inRuns(cjk, norm.NFKC.String(cue)) {
				return true
			}
		} else if own[cue] {
			return true
		}
	}
	return false
}

func inRuns(runs []string, s string) bool {
	for _, r := range runs {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// ExpansionPlan is the plan the keyword leg runs for the concept expansion: the English
// members as terms, the Japanese ones as CJK runs. Zero when the question names no
// category.
func (p *Plan) ExpansionPlan() Plan {
	var e Plan
	for _, m := range p.Expansion {
		if isCJKWord(m) {
			e.CJK = append(e.CJK, m)
		} else {
			e.Terms = append(e.Terms, m)
		}
	}
	return e
}
