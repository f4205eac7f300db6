package intent_test

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/intent"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"Empty", "", ""},
		{"OnlySpaces", "   ", ""},
		{"OnlyMixedWhiteSpace", "\n\t \u3000\u00a0", ""},
		{"ASCIIUnchanged", "remember that i'm vegan", "remember that i'm vegan"},
		{"ASCIILowercased", "Remember THAT", "remember that"},
		{"ASCIIWhiteSpaceCollapsed", "  remember\n\n\tthat   i'm  vegan \r\n", "remember that i'm vegan"},
		{"FullWidthLatinFolded", "ＲＥＭＥＭＢＥＲ that", "remember that"},
		{"FullWidthDigitsFolded", "１２３４", "1234"},
		{"IdeographicSpaceCollapsed", "これ\u3000\u3000覚えて", "これ 覚えて"},
		{"NoBreakSpaceCollapsed", "a\u00a0\u00a0b", "a b"},
		{"HalfWidthKatakanaFolded", "ﾒﾓっといて", "メモっといて"},
		{"FullWidthPunctuationFolded", "覚えておいて！？", "覚えておいて!?"},
		{"CurlyApostropheKept", "Don’t", "don’t"},
		{"CompatibilityCharactersFolded", "①ﬁ", "1fi"},
		{"AccentedUppercaseLowered", "ÉCOLE Ünïcode", "école ünïcode"},
		{"CombiningSequenceComposed", "e\u0301", "\u00e9"},
		{"InvalidUTF8Replaced", "a\xffb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := intent.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNormalizeNoAllocation pins the fast path: text already in normal form
// is returned as is.
func TestNormalizeNoAllocation(t *testing.T) {
	for _, s := range []string{"remember that i'm vegan", "これ覚えておいてね"} {
		if n := testing.AllocsPerRun(100, func() { intent.Normalize(s) }); n != 0 {
			t.Errorf("Normalize(%q) allocates %v times, want 0", s, n)
		}
	}
}

// TestExplicitNoAllocationASCII pins the fast path the gate takes for most
// messages: ASCII text is scanned in place.
func TestExplicitNoAllocationASCII(t *testing.T) {
	for _, s := range []string{"Hey, can you REMEMBER that my cat is called Momo?", "what's the weather like today?"} {
		if n := testing.AllocsPerRun(100, func() { intent.Explicit(s); intent.HighSignal(s) }); n != 0 {
			t.Errorf("Explicit and HighSignal of %q allocate %v times, want 0", s, n)
		}
	}
}

// explicitMatches maps a message to the phrase ExplicitPhrase must report.
var explicitMatches = []struct{ text, phrase string }{
	// "remember" in request forms.
	{"Remember that I'm allergic to peanuts.", "remember"},
	{"remember: my sister's name is Ana", "remember"},
	{"Remember, I'm vegan.", "remember"},
	{"Remember!", "remember"},
	{"ok so remember this for later", "remember"},
	{"and remember, the deploy freeze starts Friday", "remember"},
	{"Please remember my birthday is May 3rd", "remember"},
	{"please remember my cat?", "remember"},
	{"Can you remember that I moved to Osaka?", "remember"},
	{"could you also remember my timezone is JST", "remember"},
	{"I want you to remember that I prefer metric units", "remember"},
	{"I'd like you to remember my pronouns", "remember"},
	{"you should remember that I hate cilantro", "remember"},
	{"make sure to remember our anniversary", "remember"},
	{"hey kioku remember I'm on night shift this week", "remember"},
	{"<@123456789> remember this: standup moved to 10", "remember"},
	{"Remember to answer in Spanish", "remember"},
	{"Remember that I'm vegan, ok?", "remember"},
	{"remember that I'm off on Friday\nanyway what should we eat tonight?", "remember"},
	{"Well, remember that the office is closed", "remember"},
	{"REMEMBER THAT I'M VEGAN", "remember"},
	{"ＲＥＭＥＭＢＥＲ that my cat is called Momo", "remember"},
	{"Ｐｌｅａｓｅ\u3000ｒｅｍｅｍｂｅｒ\u3000ｍｙ\u3000ｎａｍｅ", "remember"},
	{"  remember\n\n\tthat   I'm   vegan  ", "remember"},
	{"remember this: 明日は10時から", "remember"},
	{"これ、remember that", "remember"},

	// "don't forget" and its spellings.
	{"Don't forget my birthday is next week", "don't forget"},
	{"dont forget that the meeting moved", "don't forget"},
	{"Don’t forget I'm gluten-free", "don't forget"},
	{"don\u02bct forget the keys", "don't forget"},
	{"DON'T FORGET: rent is due on the 1st", "don't forget"},
	{"ＤＯＮ’Ｔ\u3000ＦＯＲＧＥＴ", "don't forget"},
	{"oh and don't   forget\nthe milk", "don't forget"},
	{"make sure you don't forget the deadline", "don't forget"},
	{"please do not forget my order", "do not forget"},
	{"Never forget that I'm allergic to shellfish", "never forget"},

	// "note" as a word.
	{"Note: my timezone is JST", "note"},
	{"note that I switched teams", "note"},
	{"Please note my new address", "note"},
	{"Note this down: the server IP is 10.0.0.5", "note"},
	{"ok, note that the repo moved", "note"},
	{"side note: I moved to Kyoto", "note"},
	{"Note to self: buy milk", "note"},
	{"NOTE THAT I'M LEFT-HANDED", "note"},
	{"Take note of my shoe size, 27cm", "take note"},
	{"take a note: dentist on Tuesday", "take note"},
	{"can you take notes on this meeting", "take note"},
	{"make a note that Bob is on vacation", "make a note"},
	{"can you make a mental note that I hate mornings", "make a note"},

	// Fixed phrases, anywhere.
	{"Commit this to memory: my locker is 42", "commit to memory"},
	{"please commit to memory that I use vim", "commit to memory"},
	{"commit it to your memory", "commit to memory"},
	{"For future reference, I'm a night owl", "for future reference"},
	{"I use dark mode, for future conversations", "for future conversations"},
	{"for FUTURE conversation: I'm in Berlin now", "for future conversations"},

	// Japanese.
	{"これ覚えておいて", "覚えておいて"},
	{"明日の会議は10時からだから覚えといて", "覚えといて"},
	{"これを覚えて", "覚えて"},
	{"それ覚えて!", "覚えて"},
	{"それを覚えてね", "覚えて"},
	{"今後のために覚えて", "覚えて"},
	{"後で使えるように覚えて", "覚えて"},
	{"ちゃんと覚えて、明日使うから", "覚えて"},
	{"覚えてください", "覚えて"},
	{"私のことを覚えてくれる?", "覚えて"},
	{"覚えてて", "覚えてて"},
	{"覚えててね", "覚えてて"},
	{"覚えていてください", "覚えていて"},
	{"覚えておいてね", "覚えておいて"},
	{"私の誕生日は5月3日です。覚えておいてください。", "覚えておいて"},
	{"覚えておいてくれ", "覚えておいて"},
	{"覚えて置いてね", "覚えておいて"},
	{"覚えといてね", "覚えといて"},
	{"覚えておけ", "覚えておけ"},
	{"覚えとけよ", "覚えとけ"},
	{"おぼえておいて", "おぼえておいて"},
	{"おぼえといて〜", "おぼえといて"},
	{"忘れないで", "忘れないで"},
	{"忘れないでね", "忘れないで"},
	{"忘れないでください", "忘れないで"},
	{"忘れないで下さい", "忘れないで"},
	{"わすれないでね", "わすれないで"},
	{"忘れるなよ", "忘れるな"},
	{"忘れちゃダメだよ", "忘れちゃだめ"},
	{"メモっといて", "メモっといて"},
	{"メモしといて", "メモしといて"},
	{"メモしておいて", "メモしておいて"},
	{"メモっておいて", "メモっておいて"},
	{"これメモして", "メモして"},
	{"記憶しておいて", "記憶しておいて"},
	{"ねえ、僕の猫の名前はモモだから覚えておいてね。", "覚えておいて"},
	{"ｺﾚ覚えておいて", "覚えておいて"},
	{"ﾒﾓっといて！", "メモっといて"},
	{"これ\u3000覚えて\u3000おいて！", "覚えておいて"},
	{"Ｗｉ-Ｆｉのパスワードは１２３４、覚えておいて", "覚えておいて"},
	{"明日１０時、忘れないで！", "忘れないで"},
	{"これ 覚えて", "覚えて"},
}

// explicitNonMatches are messages the gate must let through: no phrase,
// the phrase inside another word, or a question or statement about memory.
var explicitNonMatches = []struct{ name, text string }{
	{"Empty", ""},
	{"OnlySpaces", "   "},
	{"OnlyNewlines", "\n\t\n"},
	{"Greeting", "hello"},
	{"Notebook", "notebook"},
	{"NotebookInSentence", "my notebook is full"},
	{"Footnote", "footnote"},
	{"Denote", "what does x denote here?"},
	{"NotesNoun", "the notes are in the drive"},
	{"Noted", "noted, thanks"},
	{"NoteNoun", "I left a note on the fridge"},
	{"NoteNounWithThat", "there's a note that says hi"},
	{"NoteInList", "pen, note, paper"},
	{"IMakeANote", "I'll make a note of it"},
	{"DidYouTakeNotes", "did you take notes?"},
	{"DoYouRemember", "do you remember"},
	{"DoYouRememberMyCat", "Do you remember my cat?"},
	{"IRememberWhen", "I remember when we met"},
	{"ICantRemember", "I can't remember the password"},
	{"WhyDontYouRemember", "Why don't you remember?"},
	{"RememberWhen", "remember when we went to Paris?"},
	{"RememberMeQuestion", "remember me?"},
	{"RememberMyCatQuestion", "Remember my cat, Momo? She's sick."},
	{"Remembered", "I remembered to call mom"},
	{"Remembering", "remembering things is hard"},
	{"IllRemember", "I'll remember that"},
	{"WellRemember", "we’ll remember that"},
	{"IDontForget", "I don't forget faces"},
	{"INeverForget", "I never forget a face"},
	{"YoullNeverForget", "you'll never forget this"},
	{"DidntForget", "I didn't forget"},
	{"Commitment", "thanks for the commitment to memory research"},
	{"DontCommit", "please don't commit this to memory"},
	{"DontRememberThis", "please don't remember this"},
	{"DontTakeNotes", "don't take notes, this is off the record"},
	{"ForTheFuture", "saving for the future"},
	{"MemoPad", "メモ帳"},
	{"MemoPadInSentence", "新しいメモ帳を買った"},
	{"MemoTopic", "メモって何?"},
	{"DoYouRememberJa", "覚えてる?"},
	{"DoYouRememberThisJa", "これ覚えてる？"},
	{"DontRememberJa", "覚えてない"},
	{"RememberedJa", "それ覚えてた"},
	{"ThanksForRememberingJa", "覚えててくれたんだ、ありがとう"},
	{"GladIRememberedJa", "覚えておいてよかった"},
	{"ThanksForNotForgettingJa", "忘れないでくれてありがとう"},
	{"ForgotJa", "傘を忘れちゃった"},
	{"AfterMemorizingJa", "単語を覚えてから寝る"},
	{"IllRememberJa", "覚えておきます"},
	{"IfYouRememberJa", "これを覚えておけば大丈夫"},
	{"HowCouldYouForgetJa", "忘れるなんてひどい"},
	{"DoYouRememberHisNameJa", "彼の名前、覚えてる?"},
	{"Weather", "今日はいい天気ですね"},
}

func TestExplicit(t *testing.T) {
	for _, tt := range explicitMatches {
		t.Run("Matches/"+tt.text, func(t *testing.T) {
			phrase, ok := intent.ExplicitPhrase(tt.text)
			if !ok || phrase != tt.phrase {
				t.Errorf("ExplicitPhrase(%q) = %q, %v; want %q, true", tt.text, phrase, ok, tt.phrase)
			}
			if !intent.Explicit(tt.text) {
				t.Errorf("Explicit(%q) = false, want true", tt.text)
			}
		})
	}
	for _, tt := range explicitNonMatches {
		t.Run("Ignores/"+tt.name, func(t *testing.T) {
			if phrase, ok := intent.ExplicitPhrase(tt.text); ok {
				t.Errorf("ExplicitPhrase(%q) = %q, true; want no match", tt.text, phrase)
			}
			if intent.Explicit(tt.text) {
				t.Errorf("Explicit(%q) = true, want false", tt.text)
			}
		})
	}
}

// TestExplicitPhraseInsideSentence puts every matching message in the middle
// of a longer one, in several cases, to show position and case do not matter.
func TestExplicitPhraseInsideSentence(t *testing.T) {
	for _, tt := range explicitMatches {
		for _, text := range []string{
			"Thanks for the help earlier. " + tt.text + " Talk soon.",
			strings.ToUpper(tt.text),
		} {
			t.Run("Matches/"+text, func(t *testing.T) {
				if phrase, ok := intent.ExplicitPhrase(text); !ok || phrase != tt.phrase {
					t.Errorf("ExplicitPhrase(%q) = %q, %v; want %q, true", text, phrase, ok, tt.phrase)
				}
			})
		}
	}
}

var highSignalMatches = []string{
	"We decided to use Postgres",
	"we've finally decided on the name",
	"I decided to quit coffee",
	"the team decided that releases ship on Tuesdays",
	"Let's go with option B",
	"let’s go with the blue one",
	"I prefer tabs over spaces",
	"I'd rather use SQLite",
	"I would rather not travel on Mondays",
	"I like green tea",
	"I really love jazz",
	"I hate cilantro",
	"I don't like horror movies",
	"I don’t really like mornings",
	"I DO NOT LIKE spam",
	"I can't stand loud music",
	"we dislike meetings before noon",
	"My favorite color is teal",
	"ｍｙ ｆａｖｏｕｒｉｔｅ band is Boris",
	"From now on, call me Sam",
	"Going forward, standups are at 10",
	"always answer in English",
	"Please never call me Bob",
	"I never drink coffee after 3pm",
	"Remember that I'm vegan",
	"note: the repo moved",
	"会議は火曜日に決めた",
	"もう決めました",
	"この方針で決定",
	"じゃあ、それで決まりね",
	"締め切りは金曜に決まった",
	"ラーメンにしよう",
	"次はカレーにしましょう",
	"毎朝走ることにした",
	"猫が好きです",
	"ピーマンが嫌い",
	"辛いものは苦手",
	"これからは敬語でお願い",
	"今後はSlackで連絡して",
	"次から英語で答えて",
	"今度から遅れないで",
	"紅茶の方がいい",
	"短い返事のほうがいい",
	"これ覚えておいて",
	"猫が 好き",
}

var highSignalNonMatches = []struct{ name, text string }{
	{"Empty", ""},
	{"Greeting", "hello"},
	{"NeverMind", "never mind"},
	{"Nevermind", "nevermind, found it"},
	{"ComplaintAboutBot", "you always say that"},
	{"AlwaysMidSentence", "is it always like this?"},
	{"WishNotPreference", "I'd like a coffee"},
	{"WouldLike", "I would like the bill"},
	{"QuestionAboutLikes", "what do you like?"},
	{"ThirdPerson", "he likes jazz"},
	{"DecideLater", "let's decide later"},
	{"Undecided", "still undecided"},
	{"Question", "do you remember my cat?"},
	{"GreetingJa", "こんにちは"},
	{"WeatherJa", "今日はいい天気"},
	{"DoYouRememberJa", "覚えてる?"},
}

func TestHighSignal(t *testing.T) {
	for _, text := range highSignalMatches {
		t.Run("Matches/"+text, func(t *testing.T) {
			if !intent.HighSignal(text) {
				t.Errorf("HighSignal(%q) = false, want true", text)
			}
		})
	}
	for _, tt := range highSignalNonMatches {
		t.Run("Ignores/"+tt.name, func(t *testing.T) {
			if intent.HighSignal(tt.text) {
				t.Errorf("HighSignal(%q) = true, want false", tt.text)
			}
		})
	}
}

// TestHighSignalIncludesExplicit checks the contract the pipeline relies on:
// a message that passes the intent gate is always extracted right away.
func TestHighSignalIncludesExplicit(t *testing.T) {
	for _, tt := range explicitMatches {
		t.Run("Matches/"+tt.text, func(t *testing.T) {
			if !intent.HighSignal(tt.text) {
				t.Errorf("HighSignal(%q) = false for an explicit request", tt.text)
			}
		})
	}
}
