package similar

import "strings"

// The word tables of the near-duplicate reading. The negations and antonym pairs it also
// reads are the contradiction screen's (contradiction.go): one list for both.

// fillerWords carry no content of a statement for telling paraphrases apart, on top of
// the contradiction screen's stopTokens: auxiliaries, modals, intensifiers and the words a
// rewording adds or drops ("Sara really loves bouldering"). A filler word that is also half
// of an antonym pair ("always", "off") still takes part in the antonym check, which reads
// every word.
var fillerWords = toSet(`about am been being can just must need needs may might shall will
what which who whom whose when where how why there here these those them him me us
into onto over up out off if than like as too quite pretty totally definitely
really very much many lot lots bit usually generally typically always`)

// synonymGroups are words a paraphrase swaps without changing what is said, the first of
// each group standing for all of them. They are compared after stemming, so one form of
// each word is enough ("begins", "began" are not: irregular forms are listed).
var synonymGroups = [][]string{
	{"start", "begin", "began", "begun", "commence"},
	{"end", "finish"},
	{"movie", "film"},
	{"reply", "answer", "respond"},
	{"like", "enjoy"},
	{"love", "adore"},
	{"hate", "detest", "loathe"},
	{"learn", "study", "studying", "learning"},
	{"name", "call", "called", "named"},
	{"live", "reside", "living", "lives"},
	{"move", "relocate", "moved"},
	{"talk", "speak", "spoke"},
	{"use", "utilize", "utilise"},
	{"help", "assist"},
	{"buy", "purchase", "bought"},
	{"big", "large"},
	{"small", "little"},
	{"fast", "quick"},
	{"kid", "child", "children"},
	{"mom", "mother", "mum"},
	{"dad", "father"},
	{"favorite", "favourite", "fave"},
	{"color", "colour"},
	{"choose", "pick", "chose", "chosen"},
	{"price", "cost"},
	{"happy", "glad"},
}

// irregularForms are English verb and noun forms the stemmer does not bring to their base.
var irregularForms = map[string]string{
	"goes": "go", "went": "go", "gone": "go", "took": "take", "taken": "take", "made": "make",
	"got": "get", "gotten": "get", "came": "come", "saw": "see", "seen": "see", "said": "say",
	"told": "tell", "thought": "think", "brought": "bring", "ran": "run", "ate": "eat", "eaten": "eat",
	"drank": "drink", "drunk": "drink", "wrote": "write", "written": "write", "left": "leave",
	"felt": "feel", "kept": "keep", "met": "meet", "paid": "pay", "sold": "sell", "sent": "send",
	"spent": "spend", "built": "build", "knew": "know", "known": "know", "gave": "give",
	"given": "give", "found": "find", "held": "hold", "taught": "teach", "caught": "catch",
	"flew": "fly", "flown": "fly", "grew": "grow", "grown": "grow", "drove": "drive", "driven": "drive",
	"rode": "ride", "sang": "sing", "sung": "sing", "swam": "swim", "forgot": "forget",
	"forgotten": "forget", "slept": "sleep", "woke": "wake", "wore": "wear", "worn": "wear",
	"people": "person", "men": "man", "women": "woman", "feet": "foot", "teeth": "tooth",
}

// cjkSynonyms are Japanese words a paraphrase swaps, each read as the second.
var cjkSynonyms = strings.NewReplacer("お気に入り", "好き", "学習", "勉強", "職業", "仕事")

// relationWords name a person by their tie to someone ("Alice's sister"): a statement that
// names one and another that does not are about different people.
var relationWords = toSet(`sister sisters brother brothers mother mom mum father dad parent parents
wife husband son sons daughter daughters friend friends boss partner girlfriend boyfriend cousin
aunt uncle grandma grandpa grandmother grandfather roommate coworker colleague kid kids child
children family niece nephew fiance fiancee`)

// cjkRelationWords are relationWords in Japanese, found inside CJK text. 夫 and 親 are left
// out: they sit inside everyday words (大丈夫, 親切).
var cjkRelationWords = []string{"妹", "姉", "兄", "弟", "母", "父", "妻", "息子", "娘", "友達", "友人",
	"上司", "彼女", "彼氏", "家族", "子供", "祖母", "祖父", "同僚", "旦那", "奥さん"}

// numberWords are the English numbers a memory spells out, as digits.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
	"eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
	"fifty": "50", "hundred": "100", "thousand": "1000", "dozen": "12", "once": "1", "twice": "2",
	"first": "1st", "second": "2nd", "third": "3rd",
}

// cjkNumerals are kanji numerals, read as digits when a counter follows (三匹, 二人).
var cjkNumerals = map[rune]string{'一': "1", '二': "2", '三': "3", '四': "4", '五': "5", '六': "6",
	'七': "7", '八': "8", '九': "9", '十': "10", '両': "2"}

// cjkCounters are the counters that make a kanji numeral a number.
const cjkCounters = "匹人回個時日月年歳枚本杯冊台週分件名"

// dayWords name a day, a month or a time of the week: two statements that name different
// ones are about different times. English words map to one form each.
var dayWords = map[string]string{
	"monday": "mon", "mon": "mon", "mondays": "mon", "tuesday": "tue", "tue": "tue", "tues": "tue", "tuesdays": "tue",
	"wednesday": "wed", "wed": "wed", "wednesdays": "wed", "thursday": "thu", "thu": "thu", "thur": "thu",
	"thurs": "thu", "thursdays": "thu", "friday": "fri", "fri": "fri", "fridays": "fri", "saturday": "sat",
	"sat": "sat", "saturdays": "sat", "sunday": "sun", "sun": "sun", "sundays": "sun",
	"january": "jan", "jan": "jan", "february": "feb", "feb": "feb", "march": "mar", "april": "apr",
	"apr": "apr", "june": "jun", "jun": "jun", "july": "jul", "jul": "jul", "august": "aug", "aug": "aug",
	"september": "sep", "sept": "sep", "sep": "sep", "october": "oct", "oct": "oct", "november": "nov",
	"nov": "nov", "december": "dec", "dec": "dec",
	"today": "today", "tonight": "tonight", "tomorrow": "tomorrow", "yesterday": "yesterday",
	"weekend": "weekend", "weekends": "weekend", "weekday": "weekday", "weekdays": "weekday",
}

// cjkDayWords are dayWords in Japanese, found inside CJK text, mapped to the English forms
// (月曜 and 月曜日 are both "mon").
var cjkDayWords = [][2]string{
	{"月曜", "mon"}, {"火曜", "tue"}, {"水曜", "wed"}, {"木曜", "thu"}, {"金曜", "fri"}, {"土曜", "sat"},
	{"日曜", "sun"}, {"明後日", "aftertomorrow"}, {"今日", "today"}, {"今夜", "tonight"}, {"今晩", "tonight"},
	{"明日", "tomorrow"}, {"昨日", "yesterday"}, {"週末", "weekend"}, {"平日", "weekday"},
	{"来週", "nextweek"}, {"先週", "lastweek"}, {"今週", "thisweek"}, {"来月", "nextmonth"}, {"先月", "lastmonth"},
	{"今月", "thismonth"}, {"去年", "lastyear"}, {"来年", "nextyear"}, {"今年", "thisyear"},
}

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
