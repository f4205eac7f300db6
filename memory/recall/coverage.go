package recall

import (
	"strings"
)

// coverWindow is how many of the best candidates the coverage stage reorders; below it
// the ranking is left as it is.
const coverWindow = 30

// commonCues are the CJK phrases of an "in common" question.
var commonCues = []string{"共通", "二人とも", "ふたりとも", "両方", "どちらも", "2人とも"}

// asksInCommon reports whether a question asks what several people or conversations share
// ("what do X and Y have in common", "which cities have both visited", 二人とも…): its
// answer is spread over several authors, so near-duplicates of one should not fill the top.
func asksInCommon(words, cjk []string) bool {
	for _, w := range words {
		switch w {
		case "both", "common", "shared", "share":
			return true
		}
	}
	for _, run := range cjk {
		for _, cue := range commonCues {
			if strings.Contains(run, cue) {
				return true
			}
		}
	}
	return false
}

// Cover reorders the best coverWindow of ranked (best first) for an "in common" question
// when s.Coverage is on, MMR-style: going down the list, a candidate whose author or
// channel-day already has s.Coverage places above it waits behind the next candidate from
// an author and channel-day still under that count. Scores are left as they were; the
// result is cut to limit (0: all). Other questions get ranked back unchanged but cut.
func Cover(cands []Candidate, ranked []Ranked, plan *Plan, s Stages, limit int) []Ranked {
	if s.Coverage > 0 && plan.Common && len(ranked) > 1 {
		ranked = cover(cands, ranked, s.Coverage)
	}
	if limit > 0 && len(ranked) > limit {
		ranked = ranked[:limit]
	}
	return ranked
}

func cover(cands []Candidate, ranked []Ranked, most int) []Ranked {
	n := min(len(ranked), coverWindow)
	rest := append([]Ranked(nil), ranked[:n]...)
	out := make([]Ranked, 0, len(ranked))
	authors, days := map[string]int{}, map[string]int{}
	for len(rest) > 0 {
		pick := 0
		for j, r := range rest {
			a, d := coverKeys(&cands[r.Index])
			if (a == "" || authors[a] < most) && days[d] < most {
				pick = j
				break
			}
		}
		r := rest[pick]
		rest = append(rest[:pick], rest[pick+1:]...)
		a, d := coverKeys(&cands[r.Index])
		if a != "" {
			authors[a]++
		}
		days[d]++
		out = append(out, r)
	}
	return append(out, ranked[n:]...)
}

// coverKeys are the author and the channel-day (scope, origin channel and UTC date) a
// candidate counts against; the author is empty when unknown.
func coverKeys(c *Candidate) (author, day string) {
	return foldName(c.AuthorName), c.Scope + "\x00" + c.Channel + "\x00" + c.CreatedAt.UTC().Format("2006-01-02")
}
