package main

import (
	"flag"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// searchFilterFlags are the filter flags of `kioku memories search`, the same filters as
// /memory search and the model's search_memories.
type searchFilterFlags struct {
	typ, tags, since, until, author, include string
	pinned                                   bool
	minScore                                 float64
}

func (ff *searchFilterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&ff.typ, "type", "", "only this memory type: "+typeNames())
	fs.StringVar(&ff.tags, "tag", "", "only memories with these tags (comma-separated, all required)")
	fs.StringVar(&ff.since, "since", "", "only memories from this date on: "+memory.DateFormats)
	fs.StringVar(&ff.until, "until", "", "only memories up to this date (a bare date includes the whole day)")
	fs.BoolVar(&ff.pinned, "pinned", false, "only pinned memories")
	fs.StringVar(&ff.author, "author", "", "only memories said or saved by this user id")
	fs.Float64Var(&ff.minScore, "min-score", 0, "leave out matches scoring under this (0 to 1)")
	fs.StringVar(&ff.include, "include", "", "also search memories in these states, left out by default: superseded, archived (comma-separated)")
}

// apply puts the flags into q and checks them; ages count back from now.
func (ff *searchFilterFlags) apply(q *memory.SearchQuery, now time.Time) error {
	if ff.typ != "" {
		q.Types = []memory.Type{memory.Type(strings.ToLower(ff.typ))}
	}
	for t := range strings.SplitSeq(ff.tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			q.Tags = append(q.Tags, t)
		}
	}
	for st := range strings.SplitSeq(ff.include, ",") {
		if st = strings.ToLower(strings.TrimSpace(st)); st != "" {
			q.Include = append(q.Include, memory.State(st))
		}
	}
	var err error
	if q.Since, err = memory.ParseSearchDate("--since", ff.since, now, false); err != nil {
		return err
	}
	if q.Until, err = memory.ParseSearchDate("--until", ff.until, now, true); err != nil {
		return err
	}
	q.PinnedOnly, q.AuthorID, q.MinScore = ff.pinned, strings.TrimSpace(ff.author), ff.minScore
	return q.ValidateFilters()
}
