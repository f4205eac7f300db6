package memory

import "regexp"

// secretPatterns recognise credentials people paste by mistake. A false positive costs a
// rephrase; a false negative puts a live token in a database and in prompts, so the list
// errs on the side of refusing.
var secretPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
	{"Discord token", regexp.MustCompile(`\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b`)},
	{"OpenAI key", regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}`)},
	{"GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})`)},
	{"AWS access key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"JWT", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"password", regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[:=]\s*\S{4,}`)},
}

// DetectSecret reports whether s looks like it contains a credential, and which kind.
func DetectSecret(s string) (kind string, ok bool) {
	for _, p := range secretPatterns {
		if p.re.MatchString(s) {
			return p.kind, true
		}
	}
	return "", false
}

// RedactSecrets replaces anything that looks like a credential with "[redacted <kind>]".
// Transcripts use it: the words are kept, the secret is not.
func RedactSecrets(s string) string {
	for _, p := range secretPatterns {
		if p.re.MatchString(s) {
			s = p.re.ReplaceAllString(s, "[redacted "+p.kind+"]")
		}
	}
	return s
}
