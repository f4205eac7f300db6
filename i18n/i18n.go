// Package i18n is kioku's message catalogue: every string a member or admin sees in Discord
// (replies, notices, errors, embeds, buttons, modals, command descriptions) is a Key with a
// text per Locale. English is the fallback; a test fails when a key misses a language or the
// languages disagree on their format verbs.
//
// Catalogue files register their keys from init (registration is the only init side effect
// allowed): one file per area, so areas grow without touching each other.
package i18n

import (
	"fmt"
	"sort"
	"strings"
)

// Locale is a language kioku speaks.
type Locale string

// The languages of the catalogue.
const (
	English  Locale = "en"
	Japanese Locale = "ja"
)

// Locales lists every language of the catalogue, fallback first.
var Locales = []Locale{English, Japanese}

// Key names one message of the catalogue.
type Key string

// Text is one message in every language of the catalogue. The texts are fmt formats; all
// languages use the same verbs in the same order (use explicit indexes such as %[2]s when a
// language needs another order).
type Text struct {
	EN string
	JA string
}

func (t Text) in(l Locale) string {
	if l == Japanese && t.JA != "" {
		return t.JA
	}
	return t.EN
}

var catalogue = map[Key]Text{}

// Register adds messages to the catalogue; it is called from the init of each catalogue
// file and panics on a key registered twice, which is a programming error.
func Register(texts map[Key]Text) {
	for k, t := range texts {
		if _, dup := catalogue[k]; dup {
			panic(fmt.Sprintf("i18n: key %q registered twice", k))
		}
		catalogue[k] = t
	}
}

// T returns the message key in locale l, formatted with args. An unknown key returns the key
// itself, so a missing entry shows up as an obvious string instead of an empty reply.
func T(l Locale, key Key, args ...any) string {
	t, ok := catalogue[key]
	if !ok {
		return string(key)
	}
	if len(args) == 0 {
		return t.in(l)
	}
	return fmt.Sprintf(t.in(l), args...)
}

// Localizations returns the texts of key in every language but English, keyed by Discord
// locale codes, for a command's name_localizations and description_localizations.
func Localizations(key Key) map[string]string {
	t, ok := catalogue[key]
	if !ok || t.JA == "" {
		return nil
	}
	return map[string]string{"ja": t.JA}
}

// Parse maps a Discord locale code ("ja", "en-US", "en-GB") or a configured language to a
// Locale, falling back to English for every language the catalogue does not have.
func Parse(code string) Locale {
	code = strings.ToLower(strings.TrimSpace(code))
	if code == "ja" || strings.HasPrefix(code, "ja-") {
		return Japanese
	}
	return English
}

// Keys returns every registered key, sorted; tests walk it.
func Keys() []Key {
	out := make([]Key, 0, len(catalogue))
	for k := range catalogue {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Lookup returns the texts of key and whether it is registered.
func Lookup(key Key) (Text, bool) {
	t, ok := catalogue[key]
	return t, ok
}
