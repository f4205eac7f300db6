package intent

// questionWindow is how many words a sentence may run on after "remember"
// and still be read as a question when it ends in "?". Once newlines are
// collapsed, a request and an unrelated question often share one sentence
// ("remember I'm off on Friday\nanyway what should we eat tonight?"); a short
// window keeps those requests while "remember my cat, Momo?" stays a
// question.
const questionWindow = 6

// English phrases reported by ExplicitPhrase.
const (
	phraseRemember        = "remember"
	phraseDontForget      = "don't forget"
	phraseDoNotForget     = "do not forget"
	phraseNeverForget     = "never forget"
	phraseNote            = "note"
	phraseTakeNote        = "take note"
	phraseMakeNote        = "make a note"
	phraseCommit          = "commit to memory"
	phraseFutureConvs     = "for future conversations"
	phraseFutureReference = "for future reference"
)

// explicitEnglish returns the English explicit-intent phrase in s, if any. s
// is ASCII or normalized.
func explicitEnglish(s string) (string, bool) {
	var h history
	sc := scanner{s: s}
	for {
		t, ok := sc.next()
		if !ok {
			return "", false
		}
		if t.kind == tokenWord {
			if p := explicitAt(&h, t.word, sc); p != "" {
				return p, true
			}
		}
		h.push(t)
	}
}

// signalEnglish reports whether s holds an English explicit-intent phrase or
// decision or preference language, in one pass.
func signalEnglish(s string) bool {
	var h history
	sc := scanner{s: s}
	for {
		t, ok := sc.next()
		if !ok {
			return false
		}
		if t.kind == tokenWord {
			if explicitAt(&h, t.word, sc) != "" || signalAt(&h, t.word, sc) {
				return true
			}
		}
		h.push(t)
	}
}

// explicitAt judges the word w given the words before it (h) and a scanner
// positioned just after it (ahead, a copy the rules may advance freely). It
// returns the phrase found, or "".
func explicitAt(h *history, w word, ahead scanner) string {
	switch w {
	case wRemember:
		if rememberRequest(h, ahead) {
			return phraseRemember
		}
	case wNote:
		if noteRequest(h, ahead) {
			return phraseNote
		}
	case wForget:
		return forgetRequest(h)
	case wTake, wMake:
		return noteTaking(h, w, ahead)
	case wCommit:
		// "don't commit this to memory" asks for the opposite.
		if h.word(1) != wDont && h.word(1) != wNot && commitToMemory(ahead) {
			return phraseCommit
		}
	case wFor:
		return futureUse(ahead)
	}
	return ""
}

// rememberRequest decides whether "remember" asks the bot to keep something.
// Only request forms count; questions and statements about memory do not:
//
//	match:    "Remember that …", "remember: …", "ok, remember this",
//	          "please remember …", "can you remember …",
//	          "I want you to remember …", "kioku remember my …"
//	no match: "do you remember …", "I remember when …", "I can't remember",
//	          "remember when we …", "remember me?", "remembered"
func rememberRequest(h *history, ahead scanner) bool {
	k, polite := h.skipFillers(1)
	if h.leadIn(k) {
		return true
	}
	if h.word(k).is(clsBlocker) {
		return false
	}
	if polite {
		return true
	}
	peek := ahead
	next, _ := peek.next()
	if next.word == wWhen {
		// "remember when …" recalls a shared past; it never stores one.
		return false
	}
	if !h.clauseStart(k) && !isRememberObject(next) {
		return false
	}
	return !endsAsQuestion(ahead)
}

// isRememberObject reports whether the token after "remember" introduces
// what to remember.
func isRememberObject(t token) bool {
	if t.kind == tokenPunct {
		switch t.r {
		case ':', '-', '\u2013', '\u2014':
			return true
		}
		return false
	}
	return t.word.is(clsRememberObject)
}

// noteRequest decides whether the word "note" asks the bot to note
// something. The word itself must stand alone ("notebook", "footnote",
// "notes", "noted" are other words), and it must be the verb or a label:
//
//	match:    "note: …", "Note that …", "please note …", "note this down",
//	          "can you note …"
//	no match: "a note that says hi", "I note that …", "pen, note, paper"
func noteRequest(h *history, ahead scanner) bool {
	peek := ahead
	next, _ := peek.next()
	if next.kind == tokenPunct && next.r == ':' {
		return true
	}
	k, polite := h.skipFillers(1)
	if h.leadIn(k) {
		return true
	}
	if h.word(k).is(clsBlocker) {
		return false
	}
	if polite || next.word.is(clsNoteObject) {
		return true
	}
	// After a comma a bare "note" is more likely an item in a list than an
	// instruction.
	if !h.clauseStart(k) || h.punct(k) == ',' {
		return false
	}
	return !endsAsQuestion(ahead)
}

// forgetRequest matches "don't forget", "do not forget" and "never forget"
// unless a subject makes them a statement ("I don't forget faces").
func forgetRequest(h *history) string {
	var head int
	var phrase string
	switch {
	case h.word(1) == wDont:
		head, phrase = 1, phraseDontForget
	case h.word(1) == wNot && h.word(2) == wDo:
		head, phrase = 2, phraseDoNotForget
	case h.word(1) == wNever:
		head, phrase = 1, phraseNeverForget
	default:
		return ""
	}
	k, _ := h.skipFillers(head + 1)
	if h.leadIn(k) || !h.word(k).is(clsBlocker) {
		return phrase
	}
	return ""
}

// noteTaking matches "take note", "take a note", "take notes", "make a
// note", "make a mental note" unless a subject makes them a statement ("I'll
// make a note", "did you take notes?").
func noteTaking(h *history, verb word, ahead scanner) string {
	w := ahead.nextWord()
	if w == wA {
		w = ahead.nextWord()
	}
	if w == wMental {
		w = ahead.nextWord()
	}
	if w != wNote && w != wNotes {
		return ""
	}
	k, _ := h.skipFillers(1)
	if !h.leadIn(k) && h.word(k).is(clsBlocker) {
		return ""
	}
	if verb == wTake {
		return phraseTakeNote
	}
	return phraseMakeNote
}

// commitToMemory matches "commit to memory", "commit this to memory" and
// "commit it to your memory" after "commit". The phrase says what it means
// in any position, so it needs no context.
func commitToMemory(ahead scanner) bool {
	w := ahead.nextWord()
	if w.is(clsCommitObject) {
		w = ahead.nextWord()
	}
	if w != wTo {
		return false
	}
	w = ahead.nextWord()
	if w == wYour {
		w = ahead.nextWord()
	}
	return w == wMemory
}

// futureUse matches "for future conversations" and "for future reference"
// after "for".
func futureUse(ahead scanner) string {
	if ahead.nextWord() != wFuture {
		return ""
	}
	switch ahead.nextWord() {
	case wConversations, wConversation, wChats:
		return phraseFutureConvs
	case wReference:
		return phraseFutureReference
	}
	return ""
}

// endsAsQuestion reports whether the sentence that continues at sc ends in a
// question mark within questionWindow words. A closing tag ("…, ok?",
// "…, will you?") makes a request polite, not a question.
func endsAsQuestion(sc scanner) bool {
	var last, beforeLast word
	words := 0
	for {
		t, ok := sc.next()
		if !ok {
			return false
		}
		if t.kind == tokenWord {
			words++
			if words > questionWindow {
				return false
			}
			beforeLast, last = last, t.word
			continue
		}
		switch t.r {
		case '?':
			tag := last.is(clsTag) || last.is(clsYou) && beforeLast.is(clsModal)
			return !tag
		case '.', '!', ';', '。':
			return false
		}
	}
}

// signalAt reports whether the word w, in context, is decision or preference
// language: the kind of turn worth extracting facts from right away.
func signalAt(h *history, w word, ahead scanner) bool {
	switch {
	case w == wDecided:
		// "we decided", "I've finally decided", "decided to/on/that".
		if h.word(h.skipAdverbs(1)).is(clsDecider) {
			return true
		}
		return ahead.nextWord().is(clsDecisionComplement)
	case w == wGo:
		// "let's go with", "let us go with", "I'll go with".
		lead := h.word(1) == wLets || h.word(1) == wIll || h.word(1) == wUs && h.word(2) == wLet
		return lead && ahead.nextWord() == wWith
	case w == wForward:
		// "going forward", "moving forward".
		return h.word(1) == wGoing || h.word(1) == wMoving
	case w == wOn:
		// "from now on", "from today on", "from here on".
		switch h.word(1) {
		case wNow, wToday, wHere:
			return h.word(2) == wFrom
		}
		return false
	case w.is(clsPreferVerb) || w == wRather:
		return preferenceSubject(h, w)
	case w == wStand:
		// "I can't stand".
		if h.word(1) != wCant && h.word(1) != wCannot {
			return false
		}
		return h.word(h.skipAdverbs(2)).is(clsSubject)
	case w.is(clsFavorite):
		// "my favorite", "our fave".
		return h.word(1) == wMy || h.word(1) == wOur
	case w == wAlways || w == wNever:
		// Standing rules: "I always …", "we never …", and imperatives
		// such as "always answer in English" or "never call me Bob". Not
		// "never mind", and not "you always …", which is usually a
		// complaint about the bot rather than a rule for it.
		if w == wNever && ahead.nextWord() == wMind {
			return false
		}
		if h.word(1).is(clsSubject) {
			return true
		}
		k, _ := h.skipFillers(1)
		return h.clauseStart(k)
	}
	return false
}

// preferenceSubject reports whether the preference verb at the current
// position has a first-person subject: "I like", "we really don't like",
// "I'd prefer", "I would rather". "I'd like" and "I would like" are wishes
// for the moment, not preferences, and do not count.
func preferenceSubject(h *history, verb word) bool {
	k := h.skipAdverbs(1)
	weighing := verb == wPrefer || verb == wRather
	switch h.word(k) {
	case wI, wWe:
		return true
	case wId:
		return weighing
	case wWould:
		return weighing && h.word(h.skipAdverbs(k+1)).is(clsSubject)
	}
	return false
}
