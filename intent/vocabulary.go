package intent

import "encoding/binary"

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

// entry is one vocabulary word: its spelling, lowercased with apostrophes
// removed ("dont" for "Don't"), and the roles it plays in the rules.
type entry struct {
	text  string
	roles class
}

// vocabulary is every word the rules look at. A word with no roles is here
// because a rule names it directly.
var vocabulary = [numWords]entry{
	wA:             {"a", clsBlocker},
	wAbsolutely:    {"absolutely", clsAdverb},
	wActually:      {"actually", clsAdverb},
	wAdore:         {"adore", clsPreferVerb},
	wAgainst:       {"against", clsDecisionComplement},
	wAlready:       {"already", clsAdverb},
	wAlright:       {"alright", clsTag},
	wAlso:          {"also", clsFiller | clsAdverb},
	wAlways:        {"always", clsFiller | clsAdverb},
	wAn:            {"an", clsBlocker},
	wAnd:           {"and", clsFiller},
	wAsk:           {"ask", 0},
	wAsked:         {"asked", 0},
	wAsking:        {"asking", 0},
	wBe:            {"be", 0},
	wBtw:           {"btw", clsFiller},
	wBut:           {"but", clsFiller},
	wCan:           {"can", clsBlocker | clsModal},
	wCannot:        {"cannot", clsBlocker},
	wCant:          {"cant", clsBlocker},
	wChats:         {"chats", clsFutureTopic},
	wCommit:        {"commit", 0},
	wConversation:  {"conversation", clsFutureTopic},
	wConversations: {"conversations", clsFutureTopic},
	wCould:         {"could", clsBlocker | clsModal},
	wCouldnt:       {"couldnt", clsBlocker},
	wDecided:       {"decided", 0},
	wDefinitely:    {"definitely", clsAdverb},
	wDid:           {"did", clsBlocker},
	wDidnt:         {"didnt", clsBlocker},
	wDislike:       {"dislike", clsPreferVerb},
	wDo:            {"do", clsBlocker | clsAdverb},
	wDoes:          {"does", clsBlocker},
	wDoesnt:        {"doesnt", clsBlocker},
	wDont:          {"dont", clsBlocker | clsAdverb},
	wDown:          {"down", clsNoteObject},
	wEnjoy:         {"enjoy", clsPreferVerb},
	wEspecially:    {"especially", clsAdverb},
	wEven:          {"even", clsAdverb},
	wEver:          {"ever", clsBlocker},
	wFav:           {"fav", clsFavorite},
	wFave:          {"fave", clsFavorite},
	wFavorite:      {"favorite", clsFavorite},
	wFavorites:     {"favorites", clsFavorite},
	wFavourite:     {"favourite", clsFavorite},
	wFavourites:    {"favourites", clsFavorite},
	wFinally:       {"finally", clsAdverb},
	wFor:           {"for", clsRememberObject},
	wForget:        {"forget", 0},
	wForward:       {"forward", 0},
	wFrom:          {"from", 0},
	wFuture:        {"future", 0},
	wGenerally:     {"generally", clsAdverb},
	wGenuinely:     {"genuinely", clsAdverb},
	wGo:            {"go", 0},
	wGoing:         {"going", 0},
	wGotta:         {"gotta", 0},
	wHas:           {"has", clsDecider},
	wHate:          {"hate", clsPreferVerb},
	wHave:          {"have", clsDecider},
	wHe:            {"he", clsBlocker},
	wHer:           {"her", clsBlocker},
	wHere:          {"here", 0},
	wHey:           {"hey", clsFiller},
	wHi:            {"hi", clsFiller},
	wHis:           {"his", clsBlocker},
	wHonestly:      {"honestly", clsAdverb},
	wI:             {"i", clsBlocker | clsRememberObject | clsSubject | clsDecider},
	wId:            {"id", clsBlocker | clsRememberObject},
	wIll:           {"ill", clsBlocker | clsRememberObject},
	wIm:            {"im", clsBlocker | clsRememberObject},
	wIt:            {"it", clsBlocker | clsRememberObject | clsNoteObject | clsCommitObject},
	wIve:           {"ive", clsBlocker | clsRememberObject | clsDecider},
	wJust:          {"just", clsFiller | clsAdverb},
	wK:             {"k", clsTag},
	wKinda:         {"kinda", clsAdverb},
	wKindly:        {"kindly", clsFiller | clsPolite},
	wKk:            {"kk", clsTag},
	wLet:           {"let", 0},
	wLets:          {"lets", 0},
	wLike:          {"like", clsPreferVerb},
	wLoathe:        {"loathe", clsPreferVerb},
	wLove:          {"love", clsPreferVerb},
	wMake:          {"make", 0},
	wMay:           {"may", clsBlocker},
	wMe:            {"me", clsRememberObject},
	wMemory:        {"memory", 0},
	wMental:        {"mental", 0},
	wMight:         {"might", clsBlocker},
	wMind:          {"mind", 0},
	wMostly:        {"mostly", clsAdverb},
	wMoving:        {"moving", 0},
	wMuch:          {"much", clsAdverb},
	wMust:          {"must", clsBlocker},
	wMy:            {"my", clsBlocker | clsRememberObject},
	wNeed:          {"need", 0},
	wNever:         {"never", clsBlocker | clsAdverb},
	wNot:           {"not", clsBlocker | clsAdverb},
	wNote:          {"note", 0},
	wNotes:         {"notes", 0},
	wNow:           {"now", clsFiller},
	wOfficially:    {"officially", clsAdverb},
	wOh:            {"oh", clsFiller},
	wOk:            {"ok", clsFiller | clsTag},
	wOkay:          {"okay", clsFiller | clsTag},
	wOn:            {"on", clsDecisionComplement},
	wOur:           {"our", clsBlocker | clsRememberObject},
	wPeople:        {"people", clsBlocker},
	wPersonally:    {"personally", clsAdverb},
	wPlease:        {"please", clsFiller | clsPolite | clsTag},
	wPls:           {"pls", clsFiller | clsPolite | clsTag},
	wPlz:           {"plz", clsFiller | clsPolite | clsTag},
	wPrefer:        {"prefer", clsPreferVerb},
	wRather:        {"rather", clsAdverb},
	wReally:        {"really", clsAdverb},
	wReference:     {"reference", clsFutureTopic},
	wRemember:      {"remember", 0},
	wSeriously:     {"seriously", clsAdverb},
	wShall:         {"shall", clsBlocker},
	wShe:           {"she", clsBlocker},
	wShould:        {"should", clsBlocker},
	wShouldnt:      {"shouldnt", clsBlocker},
	wSimply:        {"simply", clsAdverb},
	wSo:            {"so", clsFiller | clsAdverb},
	wSorta:         {"sorta", clsAdverb},
	wStand:         {"stand", 0},
	wStill:         {"still", clsBlocker | clsAdverb},
	wStrongly:      {"strongly", clsAdverb},
	wSure:          {"sure", 0},
	wTake:          {"take", 0},
	wThanks:        {"thanks", clsTag},
	wThat:          {"that", clsRememberObject | clsNoteObject | clsCommitObject | clsDecisionComplement},
	wThe:           {"the", clsBlocker},
	wTheir:         {"their", clsBlocker},
	wThem:          {"them", clsCommitObject},
	wThen:          {"then", clsFiller},
	wThese:         {"these", clsRememberObject | clsNoteObject | clsCommitObject},
	wThey:          {"they", clsBlocker | clsDecider},
	wTheyll:        {"theyll", clsBlocker},
	wTheyve:        {"theyve", clsDecider},
	wThis:          {"this", clsRememberObject | clsNoteObject | clsCommitObject},
	wThose:         {"those", clsRememberObject | clsCommitObject},
	wThx:           {"thx", clsTag},
	wTo:            {"to", clsBlocker | clsRememberObject | clsDecisionComplement},
	wToday:         {"today", 0},
	wTotally:       {"totally", clsAdverb},
	wTruly:         {"truly", clsAdverb},
	wTy:            {"ty", clsTag},
	wU:             {"u", clsBlocker | clsYou},
	wUs:            {"us", 0},
	wUsually:       {"usually", clsAdverb},
	wWant:          {"want", 0},
	wWanted:        {"wanted", 0},
	wWe:            {"we", clsBlocker | clsSubject | clsDecider},
	wWell:          {"well", clsBlocker}, // "we'll"; a leading "Well," is followed by a comma
	wWeve:          {"weve", clsBlocker | clsDecider},
	wWhen:          {"when", 0},
	wWho:           {"who", clsBlocker},
	wWill:          {"will", clsBlocker | clsModal},
	wWith:          {"with", 0},
	wWont:          {"wont", clsBlocker},
	wWould:         {"would", clsBlocker | clsModal},
	wWouldnt:       {"wouldnt", clsBlocker},
	wYo:            {"yo", clsFiller},
	wYou:           {"you", clsBlocker | clsYou},
	wYoull:         {"youll", clsBlocker},
	wYour:          {"your", clsBlocker},
	wYoure:         {"youre", clsBlocker},
}

// is reports whether w plays any role in c.
func (w word) is(c class) bool { return vocabulary[w].roles&c != 0 }

// maxWordLen is the longest vocabulary word ("conversations" has 13 letters)
// with some slack; a longer word cannot be in the vocabulary, so the scanner
// stops copying it.
const maxWordLen = 16

// packedWord is a word of up to maxWordLen bytes read as two integers, zero
// padded, so comparing two words is two integer comparisons.
type packedWord [2]uint64

// pack reads a word held in a zero-padded array.
func pack(b *[maxWordLen]byte) packedWord {
	return packedWord{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// indexed is one word of a bucket of wordIndex.
type indexed struct {
	key  packedWord
	word word
}

// wordIndex finds a word by its length and first letter: every word of every
// message goes through lookupWord, and a bucket holds at most seven words
// (four-letter words starting with "w"), so a lookup makes a few integer
// comparisons and neither hashes nor allocates.
type wordIndex [maxWordLen + 1]['z' - 'a' + 1][]indexed

// vocabularyIndex is built once from vocabulary.
var vocabularyIndex = func() *wordIndex {
	var ix wordIndex
	for w := wA; w < numWords; w++ {
		t := vocabulary[w].text
		var b [maxWordLen]byte
		copy(b[:], t)
		bucket := &ix[len(t)][t[0]-'a']
		*bucket = append(*bucket, indexed{pack(&b), w})
	}
	return &ix
}()

// lookupWord maps the first n bytes of key, a lowercased word with its
// apostrophes removed ("dont" for "Don't") and zeros after it, to its id;
// wOther when it is not in the vocabulary.
func lookupWord(key *[maxWordLen]byte, n int) word {
	if n == 0 || key[0] < 'a' || key[0] > 'z' {
		return wOther
	}
	k := pack(key)
	for _, e := range vocabularyIndex[n][key[0]-'a'] {
		if e.key == k {
			return e.word
		}
	}
	return wOther
}

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
