package memory

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Secrets said in a sentence rather than pasted as configuration: "my password is
// hunter2", "the wifi password is 'Tr0ub4dor'", "パスワードはabc12345です", "暗証番号は1234",
// and card numbers. People write these in a chat far more often than a key file.

// SecretRulesVersion numbers the detection rules of this file and secret.go. Raise it
// whenever a rule catches more than before: a store whose data was scanned with an
// older version re-scans it on upgrade (ltm.RunRepairs), so what the new rules find is
// redacted in memories, tags, history, transcripts and job payloads written earlier.
//
//	1: the rules of the first redaction repair.
//	2: passwords and PINs in sentences (English, Japanese), whole passphrases after
//	   "password:", card numbers, Hugging Face, GitLab and npm tokens.
const SecretRulesVersion = 2

// proseSecretRules are the rules of this file, in the order secretRules runs them.
func proseSecretRules() []secretRule {
	return []secretRule{
		withNeedles(spokenPasswordRule(), "password", "passcode", "passphrase", "passwort"),
		withNeedles(regexRule("PIN", pinPattern, nil), "pin"),
		withNeedles(regexRule("password", japanesePasswordPattern, isJapanesePassword), "パスワード", "パスコード"),
		withNeedles(regexRule("PIN", japanesePINPattern, nil), "暗証番号"),
		{kind: "card number", spans: cardSpans},
	}
}

const (
	// spokenPasswordPattern: a password named in a sentence and the word after its verb.
	// The value may be quoted (groups 1 to 3, without the quotes) or bare (group 4).
	spokenPasswordPattern = `(?i)\b(?:password|passcode|passphrase|passwort)s?[ \t]+(?:is|was|will be|is now|is still|now is)[ \t]+` +
		`(?:"([^"\n]{4,})"|'([^'\n]{4,})'|“([^”\n]{4,})”|([^\s"'“”]{4,}))`
	// pinPattern: "my PIN is 1234", "pin code: 4321", "the PIN number was 00001234".
	pinPattern = `(?i)\bpin(?:[ \t]+(?:code|number))?[ \t]*(?:is|was|[:=：])[ \t]*([0-9]{4,12})\b`
	// japanesePasswordPattern: "パスワードはabc12345です", "パスワードが「Fake0pass」". Passwords
	// are typed in ASCII; the value runs to the first character that is not printable ASCII.
	japanesePasswordPattern = `(?:パスワード|パスコード)[ \t]*(?:は|が|を|:|：|=|＝)[ \t　]*「?([\x21-\x7e]{4,})`
	// japanesePINPattern: "暗証番号は1234", "暗証番号：０１２３".
	japanesePINPattern = `暗証番号[ \t]*(?:は|が|:|：|=|＝)[ \t　]*「?([0-9０-９]{4,12})`
)

// spokenPasswordRule finds "my password is X": a quoted X is a password whatever it looks
// like (unless a placeholder), a bare one must look like one (isSpokenPassword), so "my
// password is hard to remember" stays.
func spokenPasswordRule() secretRule {
	re := regexp.MustCompile(spokenPasswordPattern)
	return secretRule{kind: "password", spans: func(s string) []secretSpan {
		var out []secretSpan
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			for g := 1; g <= 4; g++ {
				start, end := m[2*g], m[2*g+1]
				if start < 0 {
					continue
				}
				if g == 4 {
					end = start + len(strings.TrimRight(s[start:end], ".,;:!?)"))
				}
				v := s[start:end]
				ok := notPlaceholder(v) && !isRedaction(s, start)
				if g == 4 {
					ok = ok && isSpokenPassword(v)
				}
				if ok {
					out = append(out, secretSpan{start, end, "password"})
				}
				break
			}
		}
		return out
	}}
}

// isSpokenPassword tells a password from the word that follows "my password is" in
// prose ("hard", "the same as yours"): it has a digit, a symbol or a capital after its
// first letter, as every password a site accepts today does.
func isSpokenPassword(v string) bool {
	if utf8.RuneCountInString(v) < 4 {
		return false
	}
	for i, r := range v {
		switch {
		case r >= '0' && r <= '9':
			return true
		case r >= 'A' && r <= 'Z' && i > 0:
			return true
		case r < utf8.RuneSelf && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			return true
		}
	}
	return false
}

// isJapanesePassword: any ASCII word after パスワードは is one, unless it is a placeholder.
func isJapanesePassword(v string) bool {
	v = strings.TrimRight(v, ".,;:!?)」")
	return utf8.RuneCountInString(v) >= 4 && notPlaceholder(v)
}

// digitRunRe finds runs of digits and single spaces or dashes between them, in which
// cardSpans looks for card numbers.
var digitRunRe = regexp.MustCompile(`[0-9]+(?:[ -][0-9]+)*`)

// cardSpans finds card numbers: 13 to 19 digits written together or in groups (a group
// of four, then groups of three to six: 4-4-4-4, 4-6-5), with a valid Luhn check digit.
// A run of groups may hold more than the card ("4111 1111 1111 1111 2031"): the longest
// card from each group on is taken. A run glued to a word, a path or a version ("v1.2",
// "id_4111…") is not a card.
func cardSpans(s string) []secretSpan {
	var out []secretSpan
	for _, run := range digitRunRe.FindAllStringIndex(s, -1) {
		if run[1]-run[0] < 13 || !cardEdge(s, run[0], run[1]) {
			continue
		}
		groups := digitGroups(s, run[0], run[1])
		for i := 0; i < len(groups); {
			j := longestCard(s, groups, i)
			if j < 0 {
				i++
				continue
			}
			start, end := groups[i][0], groups[j][1]
			out = append(out, secretSpan{start, end, "card number"})
			i = j + 1
		}
	}
	return out
}

// cardEdge reports whether the digit run s[start:end] stands on its own: not the tail of
// a word, a path, a decimal or a Discord mention, nor followed by letters or ".5".
func cardEdge(s string, start, end int) bool {
	// A Discord mention, channel link, role, emoji or timestamp ("<@id>", "<#id>",
	// "<@&id>", "<:name:id>", "<t:seconds>") holds an id, never a card.
	if start > 0 && (isKeyByte(s[start-1]) || strings.IndexByte("./+@#&!:", s[start-1]) >= 0) {
		return false
	}
	if end < len(s) {
		c := s[end]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '>' {
			return false
		}
		if (c == '.' || c == ',') && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9' {
			return false
		}
	}
	return true
}

// digitGroups splits a run of digits at its spaces and dashes.
func digitGroups(s string, start, end int) [][2]int {
	var groups [][2]int
	for i := start; i < end; {
		j := i
		for j < end && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		groups = append(groups, [2]int{i, j})
		i = j + 1
	}
	return groups
}

// longestCard returns the last group of the longest card number starting at group i, or
// -1. A card is one group of 13 to 19 digits, or a group of four followed by groups of
// three to six.
func longestCard(s string, groups [][2]int, i int) int {
	if n := groups[i][1] - groups[i][0]; n != 4 {
		if n >= 13 && n <= 19 && isCardNumber(s[groups[i][0]:groups[i][1]]) {
			return i
		}
		return -1
	}
	last := i
	for last+1 < len(groups) {
		if n := groups[last+1][1] - groups[last+1][0]; n < 3 || n > 6 {
			break
		}
		last++
	}
	for j := last; j > i; j-- {
		if isCardNumber(s[groups[i][0]:groups[j][1]]) {
			return j
		}
	}
	return -1
}

// isCardNumber checks a candidate card number: 13 to 19 digits, an issuer's first digits
// (3 to 6, or 2221–2720 for Mastercard's 16 digits) and a valid Luhn check digit. Discord
// ids (17 to 19 digits starting with 1 for years to come) and millisecond timestamps
// start with 1, so they are never taken for one.
func isCardNumber(v string) bool {
	digits := strings.NewReplacer(" ", "", "-", "").Replace(v)
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	switch d := digits[0]; {
	case d >= '3' && d <= '6':
	case d == '2' && len(digits) == 16 && digits[:4] >= "2221" && digits[:4] <= "2720":
	default:
		return false
	}
	return luhnValid(digits)
}

// luhnValid reports whether a string of digits ends in a valid Luhn check digit.
func luhnValid(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
