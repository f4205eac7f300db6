package web

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// The filters of a server's memory page: read from its URL (or from a bulk form, which
// carries the page's filters along), turned into a listing's options or a search's query,
// and written back into the links that change one of them.

// serverFilter is what a server's memory page is narrowed by. Every field is the text the
// URL holds, so links and forms write back exactly what was asked.
type serverFilter struct {
	Query, Type, Tag, Author, Channel, From, To, Lifecycle string
	Explain                                                bool
	Page                                                   int
}

// filterFields are the URL and form fields of a serverFilter.
var filterFields = []string{"q", "type", "tag", "author", "channel", "from", "to", "lifecycle", "explain", "p"}

// readFilter reads a filter from a URL's query or a posted form. Values are trimmed and
// bounded; whether they mean anything is decided by listOptions and searchQuery.
func readFilter(vals url.Values) serverFilter {
	get := func(k string, limit int) string {
		s := strings.TrimSpace(vals.Get(k))
		if utf8.RuneCountInString(s) > limit {
			s = string([]rune(s)[:limit])
		}
		return s
	}
	f := serverFilter{Query: get("q", maxQueryRunes), Type: get("type", 20), Tag: get("tag", 100), Author: get("author", 30),
		Channel: get("channel", 30), From: get("from", 40), To: get("to", 40), Lifecycle: get("lifecycle", 20),
		Explain: vals.Get("explain") == "1"}
	f.Page, _ = strconv.Atoi(vals.Get("p"))
	f.Page = max(f.Page, 1)
	return f
}

// values are the filter as URL fields, empty ones left out; page 1 is the default.
func (f serverFilter) values() url.Values {
	out := url.Values{}
	for k, v := range map[string]string{"q": f.Query, "type": f.Type, "tag": f.Tag, "author": f.Author, "channel": f.Channel,
		"from": f.From, "to": f.To, "lifecycle": f.Lifecycle} {
		if v != "" {
			out.Set(k, v)
		}
	}
	if f.Explain {
		out.Set("explain", "1")
	}
	if f.Page > 1 {
		out.Set("p", strconv.Itoa(f.Page))
	}
	return out
}

// url is the server page's address with this filter.
func (f serverFilter) url(guildID string) string { return f.at("/servers/" + url.PathEscape(guildID)) }

// at is the address of the page at path with this filter ("My memory" takes one too).
func (f serverFilter) at(path string) string {
	if q := f.values().Encode(); q != "" {
		return path + "?" + q
	}
	return path
}

// filtered reports whether anything but the page narrows the listing.
func (f serverFilter) filtered() bool {
	f.Page, f.Explain = 1, false
	return len(f.values()) > 0
}

// dates reads the from and to dates (2025-06-01, or RFC 3339; to includes its whole day).
func (f serverFilter) dates(now time.Time) (since, until time.Time, err error) {
	if since, err = memory.ParseSearchDate("from", f.From, now, false); err != nil {
		return
	}
	if until, err = memory.ParseSearchDate("to", f.To, now, true); err != nil {
		return
	}
	if !since.IsZero() && !until.IsZero() && since.After(until) {
		err = memory.Errorf(memory.EINVALID, "from is after to.")
	}
	return
}

// check refuses a filter that means nothing: an unknown type or lifecycle, an author or
// channel that is not an id, a date that does not parse.
func (f serverFilter) check(now time.Time) error {
	if f.Type != "" && !memory.Type(f.Type).Valid() {
		return memory.Errorf(memory.EINVALID, "unknown type")
	}
	if f.Lifecycle != "" && !memory.Lifecycle(f.Lifecycle).Valid() {
		return memory.Errorf(memory.EINVALID, "unknown lifecycle")
	}
	for _, id := range []string{f.Author, f.Channel} {
		if id != "" {
			if _, err := strconv.ParseUint(id, 10, 64); err != nil {
				return memory.Errorf(memory.EINVALID, "not an id")
			}
		}
	}
	_, _, err := f.dates(now)
	return err
}

// listOptions are the listing's options for this filter under aud, for page size size.
// The filter must have passed check.
func (f serverFilter) listOptions(aud *memory.Audience, size int, now time.Time) memory.ListOptions {
	since, until, _ := f.dates(now)
	return memory.ListOptions{Limit: size, Offset: (f.Page - 1) * size, Type: memory.Type(f.Type), Tag: f.Tag,
		AuthorID: f.Author, ChannelID: f.Channel, Since: since, Until: until, Lifecycle: memory.Lifecycle(f.Lifecycle),
		Audience: aud}
}

// searchQuery is recall's query for this filter over owner under aud, as /memory search
// builds one: matches only, the shelved states brought back when the lifecycle asks for
// one. A channel narrows the audience to that channel (matches then filtered by keep).
func (f serverFilter) searchQuery(owner memory.Owner, aud *memory.Audience, limit int, now time.Time) memory.SearchQuery {
	since, until, _ := f.dates(now)
	q := memory.SearchQuery{Text: f.Query, Owners: []memory.Owner{owner}, Limit: limit, Audience: aud, MatchesOnly: true,
		Since: since, Until: until, AuthorID: f.Author, Explain: f.Explain}
	if f.Type != "" {
		q.Types = []memory.Type{memory.Type(f.Type)}
	}
	if f.Tag != "" {
		q.Tags = []string{f.Tag}
	}
	if st := memory.State(f.Lifecycle); st.Shelved() {
		q.Include = []memory.State{st}
	}
	if f.Channel != "" {
		q.Audience = &memory.Audience{Channels: map[string]bool{f.Channel: aud.Channels[f.Channel]}}
	}
	return q
}

// keep reports whether a search result passes the filters recall has no field for: the
// channel and the lifecycle.
func (f serverFilter) keep(m *memory.Memory, now time.Time) bool {
	if f.Channel != "" && m.Provenance.ChannelID != f.Channel {
		return false
	}
	return f.Lifecycle == "" || m.LifecycleAt(now) == memory.Lifecycle(f.Lifecycle)
}
