package memory

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Credentials people paste by mistake (SPEC §2) are recognised by the rules below. A
// false negative puts a live token in the database and in every later prompt, so the
// rules err on the side of catching; a false positive costs a rephrase, so plain prose
// ("my password is hard to remember", "the token system", "Bearer of bad news") and
// values too short or too regular to be a credential are left alone. Each rule finds
// the span of the secret itself and leaves its label, so a redacted sentence still
// reads: "DB_PASSWORD=[redacted password]".
//
// Rules run in order, and redaction applies them one after another: a rule for a
// specific shape (a GitHub token) runs before the generic key=value rule, which then
// sees "GITHUB_TOKEN=[redacted GitHub token]" and leaves it alone. Every rule ignores
// a "[redacted …]" marker, so redacting twice changes nothing and DetectSecret of a
// redacted text is false.

// secretSpan is where a secret sits in a text, and what kind it is.
type secretSpan struct {
	start, end int
	kind       string
}

// secretRule finds the secrets of one kind in a text, in order and not overlapping.
// needles, when set, are lowercase strings of which the text must contain one for the
// rule to run: most texts hold none, and a substring search is far cheaper than a
// regular expression (every message and every transcript row read goes through here).
type secretRule struct {
	kind    string
	needles []string
	spans   func(s string) []secretSpan
}

// find returns the rule's spans in s; lower is s lowercased, for the needles.
func (r secretRule) find(s, lower string) []secretSpan {
	if len(r.needles) > 0 && !containsAny(lower, r.needles) {
		return nil
	}
	return r.spans(s)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// withNeedles returns r running only on texts that contain one of needles.
func withNeedles(r secretRule, needles ...string) secretRule {
	r.needles = needles
	return r
}

// wordEdge is what may precede a token with a fixed prefix: the start of the text or a
// character that cannot be part of the token. It consumes that character, so patterns
// put the token itself in a group.
const wordEdge = `(?:^|[^A-Za-z0-9_-])`

// shapeSecretRules find credentials by their own shape (a prefix, a header, a URL).
var shapeSecretRules = []secretRule{
	withNeedles(blockRule("private key",
		`(?i)-{3,}[ \t]*BEGIN[ A-Z0-9]*PRIVATE KEY(?:[ \t]+BLOCK)?[ \t]*-*`,
		`(?i)-{3,}[ \t]*END[ A-Z0-9]*PRIVATE KEY(?:[ \t]+BLOCK)?[ \t]*-*`), "private key"),
	withNeedles(blockRule("private key",
		`PuTTY-User-Key-File-\d+:`,
		`Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]*`), "putty-user-key-file-"),
	withNeedles(awsPairRule(), "akia", "asia"),
	withNeedles(regexRule("AWS secret access key",
		`(?i)(?:^|[^A-Za-z0-9])(?:aws[ _.-]?)?secret[ _.-]?(?:access[ _.-]?)?key["'*\x60]*`+
			`(?:[ \t]*(?:[:=：＝]|=>)[ \t]*|[ \t]+(?:is[ \t]+)?)["'\x60]?([A-Za-z0-9/+]{40,})`,
		isAWSSecret), "secret"),
	withNeedles(regexRule("Discord webhook token", `(?i)discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/([A-Za-z0-9_-]{20,})`, nil), "webhooks/"),
	withNeedles(regexRule("Slack webhook", `(?i)hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]{20,})`, nil), "hooks.slack.com"),
	withNeedles(regexRule("password", `(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:([^\s@/]+)@`, notPlaceholder), "://"),
	withNeedles(regexRule("bearer token",
		`(?i)(?:^|[^A-Za-z0-9_-])(?:proxy-)?authorization["'*\x60]*[ \t]*[:=][ \t]*["'\x60]?`+
			`(?:(?:bearer|basic|token|bot|digest|apikey)[ \t]+)?([^\s"'\x60]+)`,
		func(v string) bool { return utf8.RuneCountInString(v) >= 8 && notPlaceholder(v) }), "authorization"),
	withNeedles(regexRule("JWT", `(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`, nil), "eyj"),
	withNeedles(regexRule("Anthropic key", wordEdge+`(sk-ant-(?:[a-z]+\d\d-)?[A-Za-z0-9_-]{20,})`, randomTail(7)), "sk-ant-"),
	withNeedles(regexRule("OpenAI key", wordEdge+`(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})`, randomTail(3)), "sk-"),
	withNeedles(regexRule("GitHub token", `(?:^|[^A-Za-z0-9])(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})`, nil),
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
	withNeedles(regexRule("Stripe key", `(?:^|[^A-Za-z0-9])((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})`, nil), "_live_", "_test_"),
	withNeedles(regexRule("Google API key", wordEdge+`(AIza[0-9A-Za-z_-]{35})`, nil), "aiza"),
	withNeedles(regexRule("Slack token", wordEdge+`(xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})`, hasLetterAndDigit), "xox", "xapp-"),
	withNeedles(regexRule("Discord token", wordEdge+`([MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{25,40})`, isDiscordToken), "."),
	withNeedles(regexRule("AWS access key", `(?:^|[^A-Za-z0-9])((?:AKIA|ASIA)[A-Z0-9]{16,})`, func(v string) bool { return len(v) == 20 }), "akia", "asia"),
	withNeedles(regexRule("bearer token", `(?i)(?:^|[^A-Za-z0-9_-])bearer[ \t]+([A-Za-z0-9._~+/=-]{20,})`, hasLetterAndDigit), "bearer"),
	withNeedles(regexRule("Hugging Face token", wordEdge+`(hf_[A-Za-z0-9]{30,})`, mixesTwoClasses), "hf_"),
	withNeedles(regexRule("GitLab token", wordEdge+`(gl(?:pat|dt|rt|ptt|ft|cbt|imt|agent|oas)-[A-Za-z0-9_-]{20,})`, randomTail(6)), "gl"),
	withNeedles(regexRule("npm token", wordEdge+`(npm_[A-Za-z0-9]{36,})`, mixesTwoClasses), "npm_"),
}

// secretRules are applied in this order; see the comment at the top of the file. The
// prose rules (secret_prose.go) run after the shapes and before the key/value pairs, so
// "my password is ghp_…" says GitHub token and "password: correct horse" is one pair.
var secretRules = append(append(shapeSecretRules, proseSecretRules()...), keyValueRule())

// regexRule is a rule whose pattern's first group (or whole match, without groups) is the
// secret; valid, when set, vets each candidate.
func regexRule(kind, pattern string, valid func(string) bool) secretRule {
	re := regexp.MustCompile(pattern)
	return secretRule{kind: kind, spans: func(s string) []secretSpan {
		var out []secretSpan
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			start, end := m[0], m[1]
			if len(m) >= 4 {
				start, end = m[2], m[3]
			}
			if start < 0 {
				continue
			}
			if v := s[start:end]; isRedaction(s, start) || (valid != nil && !valid(v)) {
				continue
			}
			out = append(out, secretSpan{start, end, kind})
		}
		return out
	}}
}

// blockRule covers a multi-line block, header to footer: the body is the secret. A
// block without its footer (cut off, or pasted in part) runs to the end of the text.
func blockRule(kind, begin, end string) secretRule {
	beginRe, endRe := regexp.MustCompile(begin), regexp.MustCompile(end)
	return secretRule{kind: kind, spans: func(s string) []secretSpan {
		var out []secretSpan
		for pos := 0; pos < len(s); {
			b := beginRe.FindStringIndex(s[pos:])
			if b == nil {
				break
			}
			start, stop := pos+b[0], len(s)
			if e := endRe.FindStringIndex(s[pos+b[1]:]); e != nil {
				stop = pos + b[1] + e[1]
			}
			out = append(out, secretSpan{start, stop, kind})
			pos = stop
		}
		return out
	}}
}

// awsPairRule catches an AWS secret access key pasted next to its access key id without
// a label ("AKIA… wJalr…"): alone, a 40-character base64 word is too common to flag.
// It runs before the access key id rule, which would otherwise remove the context.
func awsPairRule() secretRule {
	id := regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?:$|[^A-Za-z0-9])`)
	secret := regexRule("AWS secret access key", `(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`, isAWSSecret)
	return secretRule{kind: secret.kind, spans: func(s string) []secretSpan {
		if !id.MatchString(s) {
			return nil
		}
		return secret.spans(s)
	}}
}

// isRedaction reports whether s at i starts a "[redacted …]" marker, so that a redacted
// text is never matched again.
func isRedaction(s string, i int) bool { return strings.HasPrefix(s[i:], "[redacted ") }

// notPlaceholder rejects what documentation writes where a secret goes: "<token>",
// "${DB_PASSWORD}", "$API_KEY", "{{ secret }}", "your-api-key", "****", "xxxx", and a
// redaction marker.
func notPlaceholder(v string) bool {
	if v == "" || strings.HasPrefix(v, "[redacted") {
		return false
	}
	if placeholderRe.MatchString(v) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(v)
	return strings.Trim(v, string(first)) != ""
}

// placeholderRe matches at the start only: "<your key>" is cut at its space.
var placeholderRe = regexp.MustCompile(`^(?:<|\$\{|\{\{|\$[A-Za-z_][A-Za-z0-9_]*$|%[A-Za-z_]+%$|(?i:your)[-_])`)

// hasLetterAndDigit holds for almost every generated token of 20 or more characters and
// for few English words.
func hasLetterAndDigit(v string) bool {
	var letter, digit bool
	for _, r := range v {
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			letter = true
		case r >= '0' && r <= '9':
			digit = true
		}
	}
	return letter && digit
}

// mixesTwoClasses holds for a random token of letters and digits: at least two of lower
// case, upper case and digits ("hf_transformers_cache_directory" has one).
func mixesTwoClasses(v string) bool {
	var lower, upper, digit int
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z':
			lower = 1
		case r >= 'A' && r <= 'Z':
			upper = 1
		case r >= '0' && r <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

// looksGenerated is the stricter test for values after an everyday word: at least eight
// characters mixing letters and digits.
func looksGenerated(v string) bool {
	return utf8.RuneCountInString(v) >= 8 && hasLetterAndDigit(v)
}

// randomTail vets a prefixed key ("sk-…"): the part after the first n characters must
// mix letters and digits, so "sk-learn-is-a-python-library" is not a key.
func randomTail(n int) func(string) bool {
	return func(v string) bool { return len(v) > n && hasLetterAndDigit(v[n:]) }
}

// isAWSSecret checks the shape of a secret access key: exactly 40 base64 characters,
// mixing cases or with digits (a long word or a path is not one).
func isAWSSecret(v string) bool {
	if len(v) != 40 {
		return false
	}
	var lower, upper, other bool
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		default:
			other = true
		}
	}
	return lower && upper && other
}

// isDiscordToken checks that a token's first part is a user id in base64, as in every
// Discord bot and user token; it keeps dotted identifiers of the same length out.
func isDiscordToken(v string) bool {
	id, _, _ := strings.Cut(v, ".")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(id, "="))
	if err != nil || len(raw) < 17 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// DetectSecret reports whether s looks like it contains a credential, and which kind.
// Anything it reports, RedactSecrets removes.
func DetectSecret(s string) (kind string, ok bool) {
	lower := strings.ToLower(s)
	for _, r := range secretRules {
		if spans := r.find(s, lower); len(spans) > 0 {
			return spans[0].kind, true
		}
	}
	return "", false
}

// RedactSecrets replaces every credential DetectSecret recognises with "[redacted
// <kind>]", keeping the words around it and the label of a key/value pair
// ("DB_PASSWORD=[redacted password]"). A private key block goes from its header through
// its footer, or to the end of the text when the footer is missing. It is idempotent,
// so stored text can be re-scanned with it safely; transcripts, short-term memory and
// the chat turn use it.
func RedactSecrets(s string) string {
	// One pass is enough for every text the rules know of; the loop is a guard against
	// a replacement completing a pattern that a rule already ran past.
	for range 3 {
		changed := false
		lower := strings.ToLower(s)
		for _, r := range secretRules {
			spans := r.find(s, lower)
			if len(spans) == 0 {
				continue
			}
			var b strings.Builder
			b.Grow(len(s))
			last := 0
			for _, sp := range spans {
				b.WriteString(s[last:sp.start])
				b.WriteString("[redacted " + sp.kind + "]")
				last = sp.end
			}
			b.WriteString(s[last:])
			s, changed = b.String(), true
			lower = strings.ToLower(s)
		}
		if !changed {
			break
		}
	}
	return s
}
