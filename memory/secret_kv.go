package memory

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Key/value pairs: a label that names a credential, a separator, and a value, as in
// `password=…`, `DB_PASSWORD: …`, `"client_secret": "…"`, `api_key=…`,
// `refresh_token=…`, `Pwd=…;` or `パスワード：…`. The value is the secret; the label
// stays. They are found by hand from each separator rather than by one regular
// expression: every message and every transcript row read passes through here, and
// a pattern able to start anywhere in the text costs a hundred times more.

var (
	// kvLongKeys may be glued to a prefix ("dbpassword", "csrftoken", "AWS_SECRET"):
	// the label is distinctive enough. The label must end with one of them.
	kvLongKeys = []string{"password", "passwd", "passphrase", "passwort", "secret", "token", "パスワード"}
	// kvKeyPrefixes name credentials when followed by "key" ("api_key", "apikey",
	// "x-api-key", "SECRET_KEY", "private.key").
	kvKeyPrefixes = []string{"api", "access", "secret", "private", "auth", "signing", "encryption", "master"}
	// kvShortKeys must stand alone or follow a separator ("SMTP_PASS", "db.pwd"), so
	// "bypass=true" is not a password.
	kvShortKeys = []string{"pwd", "pass"}
	// kvWeakKeys are everyday words as well as labels; after a colon ("Token: the unit a
	// model reads") their value must look generated to count.
	kvWeakKeys = map[string]bool{"token": true, "secret": true, "pwd": true, "pass": true}
	// kvNotValues are what configuration says where a secret is not set.
	kvNotValues = map[string]bool{"true": true, "false": true, "null": true, "none": true, "nil": true, "undefined": true}
	// codeExprRe matches a value that is program text rather than a secret: a call, or a
	// dotted name ending a struct field ("cfg.APIKey,").
	codeExprRe = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_.]*\(|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+,$)`)
)

// keyValueRule finds the values of credential key/value pairs.
func keyValueRule() secretRule {
	return secretRule{kind: "password", needles: []string{"pass", "pwd", "secret", "token", "key", "パスワード"}, spans: keyValueSpans}
}

func keyValueSpans(s string) []secretSpan {
	var out []secretSpan
	for i := 0; i < len(s); {
		sepLen := separatorAt(s, i)
		if sepLen == 0 {
			i++
			continue
		}
		sep := s[i : i+sepLen]
		next := i + sepLen
		key := keyBefore(s, i)
		start, end, ok := valueAfter(s, next)
		if key == "" || !ok {
			i = next
			continue
		}
		if isPassphraseLabel(strings.ToLower(key), sep) && !quotedAt(s, start) {
			end = clauseEnd(s, end)
		}
		if kind, ok := credentialKey(strings.ToLower(key)); ok && credentialValue(s, start, end, strings.ToLower(key), sep) {
			out = append(out, secretSpan{start, end, kind})
			i = end
			continue
		}
		i = next
	}
	return out
}

// separatorAt returns the length of the key/value separator starting at s[i], or 0.
func separatorAt(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "=>"), strings.HasPrefix(s[i:], ":="):
		return 2
	case s[i] == '=' || s[i] == ':':
		return 1
	case strings.HasPrefix(s[i:], "："), strings.HasPrefix(s[i:], "＝"):
		return len("：")
	}
	return 0
}

// keyBefore returns the label ending before the separator at sep: spaces, then quotes
// or markdown emphasis, then a run of letters, digits, '_', '.' and '-' (or
// "パスワード").
func keyBefore(s string, sep int) string {
	j := sep
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	for j > 0 && strings.IndexByte("\"'*`", s[j-1]) >= 0 {
		j--
	}
	if strings.HasSuffix(s[:j], "パスワード") {
		return "パスワード"
	}
	k := j
	for k > 0 && isKeyByte(s[k-1]) {
		k--
	}
	return s[k:j]
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// valueAfter finds the value after a separator ending at i: quoted (up to the closing
// quote on the same line) or a run of characters other than whitespace and quotes.
func valueAfter(s string, i int) (start, end int, ok bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) {
		return 0, 0, false
	}
	if q := s[i]; q == '"' || q == '\'' || q == '`' {
		n := strings.IndexAny(s[i+1:], string(q)+"\n")
		if n < 0 || s[i+1+n] != q {
			return 0, 0, false
		}
		return i + 1, i + 1 + n, true
	}
	end = i
	for end < len(s) && strings.IndexByte(" \t\n\r\f\v\"'`", s[end]) < 0 {
		end++
	}
	return i, end, end > i
}

// credentialKey reports whether a lowercased label names a credential, and which kind.
func credentialKey(key string) (kind string, ok bool) {
	for _, k := range kvLongKeys {
		if strings.HasSuffix(key, k) {
			return kvKind(k), true
		}
	}
	if rest, found := strings.CutSuffix(key, "key"); found {
		rest = strings.TrimRight(rest, "_.-")
		for _, p := range kvKeyPrefixes {
			if strings.HasSuffix(rest, p) {
				return "key", true
			}
		}
	}
	for _, k := range kvShortKeys {
		if key == k || strings.HasSuffix(key, k) && strings.IndexByte("_.-", key[len(key)-len(k)-1]) >= 0 {
			return "password", true
		}
	}
	return "", false
}

// credentialValue decides whether the value s[start:end] of a credential label is a
// secret rather than a placeholder, a setting or program text.
func credentialValue(s string, start, end int, key, sep string) bool {
	v := s[start:end]
	if isRedaction(s, start) || !notPlaceholder(v) || kvNotValues[strings.ToLower(v)] || utf8.RuneCountInString(v) < 4 {
		return false
	}
	// ":=" and "=>" are code ("token := r.PathValue(…)"); after a colon an everyday word
	// may be prose ("Secret: don't tell"): the value must look generated there.
	codeSep := sep == ":=" || sep == "=>"
	if (codeSep || (kvWeakKeys[key] && (sep == ":" || sep == "："))) && !looksGenerated(v) {
		return false
	}
	return !codeExprRe.MatchString(v)
}

// kvKind names what a key/value pair holds, for the "[redacted …]" marker.
func kvKind(core string) string {
	switch core {
	case "token":
		return "token"
	case "secret":
		return "secret"
	}
	return "password"
}

// isPassphraseLabel reports whether a password label before a colon takes the rest of its
// clause: "password: correct horse battery staple" is one passphrase, not a word
// followed by prose. After "=" (configuration) the value ends at the first space.
func isPassphraseLabel(key, sep string) bool {
	if sep != ":" && sep != "：" {
		return false
	}
	for _, k := range []string{"password", "passwd", "passphrase", "passwort", "パスワード"} {
		if strings.HasSuffix(key, k) {
			return true
		}
	}
	return false
}

func quotedAt(s string, i int) bool {
	return i > 0 && strings.IndexByte("\"'`", s[i-1]) >= 0
}

// clauseEnd extends a value ending at end to the end of its clause: a line break, ';',
// ',', a sentence's end ('.', '!', '?' before a space or the end, or '。'), or a closing
// quote. Trailing spaces are left out.
func clauseEnd(s string, end int) int {
	i := end
	for i < len(s) {
		c := s[i]
		if c == '\n' || c == '\r' || c == ';' || c == ',' || c == '"' || c == '`' {
			break
		}
		if (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t') {
			break
		}
		if strings.HasPrefix(s[i:], "。") || strings.HasPrefix(s[i:], "、") {
			break
		}
		i++
	}
	for i > end && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i
}
