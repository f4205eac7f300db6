package intent

// word identifies one of the English words the rules look at. Every other word
// is wOther: the rules only need to know that a word is there, not which one,
// so scanning never builds strings and a message costs no allocation.
type word uint8

const (
	wNone  word = iota // not a word: punctuation, or before the start of the text
	wOther             // a word outside the vocabulary

	wA
	wAbsolutely
	wActually
	wAdore
	wAgainst
	wAlready
	wAlright
	wAlso
	wAlways
	wAn
	wAnd
	wAsk
	wAsked
	wAsking
	wBe
	wBtw
	wBut
	wCan
	wCannot
	wCant
	wChats
	wCommit
	wConversation
	wConversations
	wCould
	wCouldnt
	wDecided
	wDefinitely
	wDid
	wDidnt
	wDislike
	wDo
	wDoes
	wDoesnt
	wDont
	wDown
	wEnjoy
	wEspecially
	wEven
	wEver
	wFav
	wFave
	wFavorite
	wFavorites
	wFavourite
	wFavourites
	wFinally
	wFor
	wForget
	wForward
	wFrom
	wFuture
	wGenerally
	wGenuinely
	wGo
	wGoing
	wGotta
	wHas
	wHate
	wHave
	wHe
	wHer
	wHere
	wHey
	wHi
	wHis
	wHonestly
	wI
	wId
	wIll
	wIm
	wIt
	wIve
	wJust
	wK
	wKinda
	wKindly
	wKk
	wLet
	wLets
	wLike
	wLoathe
	wLove
	wMake
	wMay
	wMe
	wMemory
	wMental
	wMight
	wMind
	wMostly
	wMoving
	wMuch
	wMust
	wMy
	wNeed
	wNever
	wNot
	wNote
	wNotes
	wNow
	wOfficially
	wOh
	wOk
	wOkay
	wOn
	wOur
	wPeople
	wPersonally
	wPlease
	wPls
	wPlz
	wPrefer
	wRather
	wReally
	wReference
	wRemember
	wSeriously
	wShall
	wShe
	wShould
	wShouldnt
	wSimply
	wSo
	wSorta
	wStand
	wStill
	wStrongly
	wSure
	wTake
	wThanks
	wThat
	wThe
	wTheir
	wThem
	wThen
	wThese
	wThey
	wTheyll
	wTheyve
	wThis
	wThose
	wThx
	wTo
	wToday
	wTotally
	wTruly
	wTy
	wU
	wUs
	wUsually
	wWant
	wWanted
	wWe
	wWell
	wWeve
	wWhen
	wWho
	wWill
	wWith
	wWont
	wWould
	wWouldnt
	wYo
	wYou
	wYoull
	wYour
	wYoure

	numWords
)

// maxWordLen is the longest vocabulary word ("conversations" has 13 letters)
// with some slack; a longer word cannot be in the vocabulary, so the scanner
// stops copying it.
const maxWordLen = 16

// lookupWord maps a lowercased word with its apostrophes removed ("dont" for
// "Don't") to its id. A switch rather than a map: the compiler turns it into
// a search on length and bytes that neither hashes nor allocates, and every
// word of every message goes through it.
func lookupWord(key []byte) word {
	switch string(key) {
	case "a":
		return wA
	case "absolutely":
		return wAbsolutely
	case "actually":
		return wActually
	case "adore":
		return wAdore
	case "against":
		return wAgainst
	case "already":
		return wAlready
	case "alright":
		return wAlright
	case "also":
		return wAlso
	case "always":
		return wAlways
	case "an":
		return wAn
	case "and":
		return wAnd
	case "ask":
		return wAsk
	case "asked":
		return wAsked
	case "asking":
		return wAsking
	case "be":
		return wBe
	case "btw":
		return wBtw
	case "but":
		return wBut
	case "can":
		return wCan
	case "cannot":
		return wCannot
	case "cant":
		return wCant
	case "chats":
		return wChats
	case "commit":
		return wCommit
	case "conversation":
		return wConversation
	case "conversations":
		return wConversations
	case "could":
		return wCould
	case "couldnt":
		return wCouldnt
	case "decided":
		return wDecided
	case "definitely":
		return wDefinitely
	case "did":
		return wDid
	case "didnt":
		return wDidnt
	case "dislike":
		return wDislike
	case "do":
		return wDo
	case "does":
		return wDoes
	case "doesnt":
		return wDoesnt
	case "dont":
		return wDont
	case "down":
		return wDown
	case "enjoy":
		return wEnjoy
	case "especially":
		return wEspecially
	case "even":
		return wEven
	case "ever":
		return wEver
	case "fav":
		return wFav
	case "fave":
		return wFave
	case "favorite":
		return wFavorite
	case "favorites":
		return wFavorites
	case "favourite":
		return wFavourite
	case "favourites":
		return wFavourites
	case "finally":
		return wFinally
	case "for":
		return wFor
	case "forget":
		return wForget
	case "forward":
		return wForward
	case "from":
		return wFrom
	case "future":
		return wFuture
	case "generally":
		return wGenerally
	case "genuinely":
		return wGenuinely
	case "go":
		return wGo
	case "going":
		return wGoing
	case "gotta":
		return wGotta
	case "has":
		return wHas
	case "hate":
		return wHate
	case "have":
		return wHave
	case "he":
		return wHe
	case "her":
		return wHer
	case "here":
		return wHere
	case "hey":
		return wHey
	case "hi":
		return wHi
	case "his":
		return wHis
	case "honestly":
		return wHonestly
	case "i":
		return wI
	case "id":
		return wId
	case "ill":
		return wIll
	case "im":
		return wIm
	case "it":
		return wIt
	case "ive":
		return wIve
	case "just":
		return wJust
	case "k":
		return wK
	case "kinda":
		return wKinda
	case "kindly":
		return wKindly
	case "kk":
		return wKk
	case "let":
		return wLet
	case "lets":
		return wLets
	case "like":
		return wLike
	case "loathe":
		return wLoathe
	case "love":
		return wLove
	case "make":
		return wMake
	case "may":
		return wMay
	case "me":
		return wMe
	case "memory":
		return wMemory
	case "mental":
		return wMental
	case "might":
		return wMight
	case "mind":
		return wMind
	case "mostly":
		return wMostly
	case "moving":
		return wMoving
	case "much":
		return wMuch
	case "must":
		return wMust
	case "my":
		return wMy
	case "need":
		return wNeed
	case "never":
		return wNever
	case "not":
		return wNot
	case "note":
		return wNote
	case "notes":
		return wNotes
	case "now":
		return wNow
	case "officially":
		return wOfficially
	case "oh":
		return wOh
	case "ok":
		return wOk
	case "okay":
		return wOkay
	case "on":
		return wOn
	case "our":
		return wOur
	case "people":
		return wPeople
	case "personally":
		return wPersonally
	case "please":
		return wPlease
	case "pls":
		return wPls
	case "plz":
		return wPlz
	case "prefer":
		return wPrefer
	case "rather":
		return wRather
	case "really":
		return wReally
	case "reference":
		return wReference
	case "remember":
		return wRemember
	case "seriously":
		return wSeriously
	case "shall":
		return wShall
	case "she":
		return wShe
	case "should":
		return wShould
	case "shouldnt":
		return wShouldnt
	case "simply":
		return wSimply
	case "so":
		return wSo
	case "sorta":
		return wSorta
	case "stand":
		return wStand
	case "still":
		return wStill
	case "strongly":
		return wStrongly
	case "sure":
		return wSure
	case "take":
		return wTake
	case "thanks":
		return wThanks
	case "that":
		return wThat
	case "the":
		return wThe
	case "their":
		return wTheir
	case "them":
		return wThem
	case "then":
		return wThen
	case "these":
		return wThese
	case "they":
		return wThey
	case "theyll":
		return wTheyll
	case "theyve":
		return wTheyve
	case "this":
		return wThis
	case "those":
		return wThose
	case "thx":
		return wThx
	case "to":
		return wTo
	case "today":
		return wToday
	case "totally":
		return wTotally
	case "truly":
		return wTruly
	case "ty":
		return wTy
	case "u":
		return wU
	case "us":
		return wUs
	case "usually":
		return wUsually
	case "want":
		return wWant
	case "wanted":
		return wWanted
	case "we":
		return wWe
	case "well":
		return wWell
	case "weve":
		return wWeve
	case "when":
		return wWhen
	case "who":
		return wWho
	case "will":
		return wWill
	case "with":
		return wWith
	case "wont":
		return wWont
	case "would":
		return wWould
	case "wouldnt":
		return wWouldnt
	case "yo":
		return wYo
	case "you":
		return wYou
	case "youll":
		return wYoull
	case "your":
		return wYour
	case "youre":
		return wYoure
	}
	return wOther
}

// class is a set of roles a word plays in the rules. A word may play several:
// "i" is a subject, a blocker before "remember" and an object after it.
type class uint32

const (
	// clsFiller words are skipped when looking back from a trigger for the
	// start of the clause: "ok so remember this" is still an imperative.
	clsFiller class = 1 << iota
	// clsPolite words make a request of whatever follows ("please remember
	// my cat?"), even when the sentence ends in a question mark.
	clsPolite
	// clsBlocker words right before a trigger make it a statement or a
	// question about memory rather than a request: "I remember", "do you
	// remember", "I'll make a note", "a note that says".
	clsBlocker
	// clsRememberObject words after "remember" say what to keep: "remember
	// that …", "remember my …", "remember I'm …".
	clsRememberObject
	// clsNoteObject words after "note" make it the verb: "note that …",
	// "note this", "note it down".
	clsNoteObject
	// clsCommitObject words may sit between "commit" and "to memory".
	clsCommitObject
	// clsTag words before a final "?" turn a request into a polite one
	// rather than a question: "remember that I'm vegan, ok?".
	clsTag
	// clsSubject words are the first-person subjects of a preference or a
	// habit: "I prefer", "we never".
	clsSubject
	// clsAdverb words may stand between a subject and its verb: "I really
	// don't like", "we finally decided".
	clsAdverb
	// clsPreferVerb words state a preference after a first-person subject.
	clsPreferVerb
	// clsFavorite words after "my" name a preference.
	clsFavorite
	// clsDecider words before "decided" make it someone's decision.
	clsDecider
	// clsDecisionComplement words after "decided" make it a decision:
	// "decided to", "decided on", "decided that".
	clsDecisionComplement
	// clsFutureTopic words complete "for future …".
	clsFutureTopic
	// clsModal words before "you" form a request ("can you …") and, at the
	// end of a sentence, a tag ("…, will you?").
	clsModal
	// clsYou words address the bot.
	clsYou
)

// classes gives the roles of every vocabulary word; words absent here play
// none and are in the vocabulary because a rule names them directly.
var classes = [numWords]class{
	wA:             clsBlocker,
	wAbsolutely:    clsAdverb,
	wActually:      clsAdverb,
	wAdore:         clsPreferVerb,
	wAgainst:       clsDecisionComplement,
	wAlready:       clsAdverb,
	wAlright:       clsTag,
	wAlso:          clsFiller | clsAdverb,
	wAlways:        clsFiller | clsAdverb,
	wAn:            clsBlocker,
	wAnd:           clsFiller,
	wBtw:           clsFiller,
	wBut:           clsFiller,
	wCan:           clsBlocker | clsModal,
	wCannot:        clsBlocker,
	wCant:          clsBlocker,
	wChats:         clsFutureTopic,
	wConversation:  clsFutureTopic,
	wConversations: clsFutureTopic,
	wCould:         clsBlocker | clsModal,
	wCouldnt:       clsBlocker,
	wDefinitely:    clsAdverb,
	wDid:           clsBlocker,
	wDidnt:         clsBlocker,
	wDislike:       clsPreferVerb,
	wDo:            clsBlocker | clsAdverb,
	wDoes:          clsBlocker,
	wDoesnt:        clsBlocker,
	wDont:          clsBlocker | clsAdverb,
	wDown:          clsNoteObject,
	wEnjoy:         clsPreferVerb,
	wEspecially:    clsAdverb,
	wEven:          clsAdverb,
	wEver:          clsBlocker,
	wFav:           clsFavorite,
	wFave:          clsFavorite,
	wFavorite:      clsFavorite,
	wFavorites:     clsFavorite,
	wFavourite:     clsFavorite,
	wFavourites:    clsFavorite,
	wFinally:       clsAdverb,
	wFor:           clsRememberObject,
	wGenerally:     clsAdverb,
	wGenuinely:     clsAdverb,
	wHas:           clsDecider,
	wHate:          clsPreferVerb,
	wHave:          clsDecider,
	wHe:            clsBlocker,
	wHer:           clsBlocker,
	wHey:           clsFiller,
	wHi:            clsFiller,
	wHis:           clsBlocker,
	wHonestly:      clsAdverb,
	wI:             clsBlocker | clsRememberObject | clsSubject | clsDecider,
	wId:            clsBlocker | clsRememberObject,
	wIll:           clsBlocker | clsRememberObject,
	wIm:            clsBlocker | clsRememberObject,
	wIt:            clsBlocker | clsRememberObject | clsNoteObject | clsCommitObject,
	wIve:           clsBlocker | clsRememberObject | clsDecider,
	wJust:          clsFiller | clsAdverb,
	wK:             clsTag,
	wKinda:         clsAdverb,
	wKindly:        clsFiller | clsPolite,
	wKk:            clsTag,
	wLike:          clsPreferVerb,
	wLoathe:        clsPreferVerb,
	wLove:          clsPreferVerb,
	wMay:           clsBlocker,
	wMe:            clsRememberObject,
	wMight:         clsBlocker,
	wMostly:        clsAdverb,
	wMuch:          clsAdverb,
	wMust:          clsBlocker,
	wMy:            clsBlocker | clsRememberObject,
	wNever:         clsBlocker | clsAdverb,
	wNot:           clsBlocker | clsAdverb,
	wNow:           clsFiller,
	wOfficially:    clsAdverb,
	wOh:            clsFiller,
	wOk:            clsFiller | clsTag,
	wOkay:          clsFiller | clsTag,
	wOn:            clsDecisionComplement,
	wOur:           clsBlocker | clsRememberObject,
	wPeople:        clsBlocker,
	wPersonally:    clsAdverb,
	wPlease:        clsFiller | clsPolite | clsTag,
	wPls:           clsFiller | clsPolite | clsTag,
	wPlz:           clsFiller | clsPolite | clsTag,
	wPrefer:        clsPreferVerb,
	wRather:        clsAdverb,
	wReally:        clsAdverb,
	wReference:     clsFutureTopic,
	wSeriously:     clsAdverb,
	wShall:         clsBlocker,
	wShe:           clsBlocker,
	wShould:        clsBlocker,
	wShouldnt:      clsBlocker,
	wSimply:        clsAdverb,
	wSo:            clsFiller | clsAdverb,
	wSorta:         clsAdverb,
	wStill:         clsBlocker | clsAdverb,
	wStrongly:      clsAdverb,
	wThanks:        clsTag,
	wThat:          clsRememberObject | clsNoteObject | clsCommitObject | clsDecisionComplement,
	wThe:           clsBlocker,
	wTheir:         clsBlocker,
	wThem:          clsCommitObject,
	wThen:          clsFiller,
	wThese:         clsRememberObject | clsNoteObject | clsCommitObject,
	wThey:          clsBlocker | clsDecider,
	wTheyll:        clsBlocker,
	wTheyve:        clsDecider,
	wThis:          clsRememberObject | clsNoteObject | clsCommitObject,
	wThose:         clsRememberObject | clsCommitObject,
	wThx:           clsTag,
	wTo:            clsBlocker | clsRememberObject | clsDecisionComplement,
	wTotally:       clsAdverb,
	wTruly:         clsAdverb,
	wTy:            clsTag,
	wU:             clsBlocker | clsYou,
	wUsually:       clsAdverb,
	wWe:            clsBlocker | clsSubject | clsDecider,
	wWell:          clsBlocker, // "we'll"; a leading "Well," is followed by a comma
	wWeve:          clsBlocker | clsDecider,
	wWho:           clsBlocker,
	wWill:          clsBlocker | clsModal,
	wWont:          clsBlocker,
	wWould:         clsBlocker | clsModal,
	wWouldnt:       clsBlocker,
	wYo:            clsFiller,
	wYou:           clsBlocker | clsYou,
	wYoull:         clsBlocker,
	wYour:          clsBlocker,
	wYoure:         clsBlocker,
}

// is reports whether w plays any role in c.
func (w word) is(c class) bool { return classes[w]&c != 0 }

// leadIn is a run of words that, right before a trigger, makes it a request
// of the bot: "can you remember …", "I want you to remember …".
type leadIn struct {
	words []word
	// anchored lead-ins count only at the start of a clause, so "how could
	// you remember that?" stays a question while "could you remember that
	// I'm vegan" is a request.
	anchored bool
}

// leadIns lists the request lead-ins, in reading order.
var leadIns = [...]leadIn{
	{[]word{wCan, wYou}, true},
	{[]word{wCould, wYou}, true},
	{[]word{wWill, wYou}, true},
	{[]word{wWould, wYou}, true},
	{[]word{wCan, wU}, true},
	{[]word{wCould, wU}, true},
	{[]word{wWill, wU}, true},
	{[]word{wWould, wU}, true},
	{[]word{wYou, wShould}, true},
	{[]word{wYou, wMust}, true},
	{[]word{wYou, wNeed, wTo}, true},
	{[]word{wYou, wHave, wTo}, true},
	{[]word{wYou, wGotta}, true},
	{[]word{wMake, wSure, wTo}, true},
	{[]word{wMake, wSure, wYou}, true},
	{[]word{wMake, wSure, wU}, true},
	{[]word{wBe, wSure, wTo}, true},
	{[]word{wWant, wYou, wTo}, false},
	{[]word{wWanted, wYou, wTo}, false},
	{[]word{wNeed, wYou, wTo}, false},
	{[]word{wLike, wYou, wTo}, false},
	{[]word{wAsk, wYou, wTo}, false},
	{[]word{wAsked, wYou, wTo}, false},
	{[]word{wAsking, wYou, wTo}, false},
	{[]word{wWant, wU, wTo}, false},
	{[]word{wNeed, wU, wTo}, false},
}
