package recall

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Smoothing is neighbourhood smoothing: a chat message often means something only beside
// the messages around it ("same", "lol yes, it's in the rulebook"), so the messages next to
// a strong hit in the same conversation share part of its score. Zero Lambda turns it off.
type Smoothing struct {
	// Lambda is the share of a hit's score its neighbours may take.
	Lambda float64
	// K is how many messages either side of a hit count as its neighbours.
	K int
	// Hits is how many of the best matches lend their score.
	Hits int
	// Cap is how many of one hit's neighbours may be lifted into the returned list, so one
	// hit's conversation never crowds out the others.
	Cap int
	// Gap splits a channel's messages into sessions: neighbours never cross a silence
	// longer than Gap.
	Gap time.Duration
	// Answers is how many of the turns after a hit that asks something (IsQuestion), by
	// someone other than its author, may take part of its score: in conversation the words
	// of a question are in one turn and the answer in the next ("which game are you
	// bringing?" → "Catan, probably"). Zero turns it off.
	Answers int
	// AnswerLambda is the share of the question's score the first answer takes; each later
	// answer takes AnswerDecay times the one before.
	AnswerLambda, AnswerDecay float64
}

// On reports whether smoothing runs.
func (s Smoothing) On() bool { return s.Lambda > 0 && s.K > 0 && s.Hits > 0 }

// Smooth re-ranks a complete ranking of cands (Rank without a limit) so that
//
//	score(m) = max(own, Lambda · score(h))
//
// for every m within K messages of one of the best Hits h (a match of either leg) in the
// same session (same scope, same channel, created in order with no gap over Gap). Memories
// without an origin channel are not part of a conversation and are never neighbours. At most Cap memories are lifted per
// hit into the first limit places; the others keep their own score. The result is cut to
// limit (0: all) and drops scores under minScore.
//
// With why (one entry per candidate, as Options.Why), each lifted candidate that is kept
// records a FactorConversation naming the match that lifted it.
func Smooth(cands []Candidate, ranked []Ranked, s Smoothing, minScore float64, limit int, why [][]Factor) []Ranked {
	out := slices2(ranked)
	sortRanked(out, cands)
	if !s.On() || len(out) == 0 {
		return cut(slices.DeleteFunc(out, func(r Ranked) bool { return cands[r.Index].Neighbour }), minScore, limit)
	}
	pos := make(map[int]int, len(out)) // candidate index → place in out
	for i, r := range out {
		pos[r.Index] = i
	}
	// Sessions: candidates ordered by (scope, channel, created_at, id).
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		ca, cb := &cands[order[a]], &cands[order[b]]
		if ca.Scope != cb.Scope {
			return ca.Scope < cb.Scope
		}
		if ca.Channel != cb.Channel {
			return ca.Channel < cb.Channel
		}
		if !ca.CreatedAt.Equal(cb.CreatedAt) {
			return ca.CreatedAt.Before(cb.CreatedAt)
		}
		return ca.ID < cb.ID
	})
	at := make([]int, len(cands)) // candidate index → place in order
	for i, ci := range order {
		at[ci] = i
	}
	same := func(a, b int) bool { // adjacent places a < b in one session
		ca, cb := &cands[order[a]], &cands[order[b]]
		return ca.Channel != "" && ca.Scope == cb.Scope && ca.Channel == cb.Channel && cb.CreatedAt.Sub(ca.CreatedAt) <= s.Gap
	}
	own := make([]float64, len(out))
	lender := make([]int, len(out)) // place of the hit that lifted it, or −1
	for i := range out {
		own[i], lender[i] = out[i].Score, -1
	}
	raise := func(q, h int, lift float64) {
		if i := pos[order[q]]; lift > out[i].Score {
			out[i].Score, lender[i] = lift, h
		}
	}
	for h := 0; h < min(s.Hits, len(out)); h++ {
		if out[h].Keyword <= 0 && out[h].Vector <= 0 {
			continue // only a match lends its score
		}
		lift := s.Lambda * own[h]
		p := at[out[h].Index]
		for dir := -1; dir <= 1; dir += 2 {
			for step, q := 1, p; step <= s.K; step++ {
				next := q + dir
				if next < 0 || next >= len(order) || !same(min(q, next), max(q, next)) {
					break
				}
				q = next
				raise(q, h, lift)
			}
		}
		if asker := &cands[out[h].Index]; s.Answers > 0 && asker.AuthorName != "" && IsQuestion(asker.Content) {
			lift := s.AnswerLambda * own[h]
			for q, answers := p, 0; answers < s.Answers && q+1 < len(order) && same(q, q+1); q++ {
				if reply := &cands[order[q+1]]; reply.AuthorName != "" && reply.AuthorName != asker.AuthorName {
					raise(q+1, h, lift)
					lift *= s.AnswerDecay
					answers++
				}
			}
		}
	}
	sortByScore(out, cands, lender, own)
	// Keep at most Cap lifted memories per hit in the first limit places.
	n := len(out)
	if limit > 0 {
		n = min(n, limit)
	}
	used := map[int]int{}
	demoted := false
	for i := 0; i < n; i++ {
		if lender[i] < 0 {
			continue
		}
		if used[lender[i]] >= s.Cap {
			out[i].Score, lender[i], demoted = own[i], -1, true
			continue
		}
		used[lender[i]]++
	}
	if demoted {
		sortByScore(out, cands, lender, own)
	}
	if why != nil {
		for i, r := range out {
			if lender[i] < 0 {
				continue
			}
			f := Factor{Stage: FactorConversation, By: cands[out[lender[i]].Index].ID}
			if own[i] > 0 {
				f.Times = r.Score / own[i]
			}
			why[r.Index] = append(why[r.Index], f)
		}
	}
	// Keep neighbours only where a hit lifted them.
	kept := out[:0]
	for i, r := range out {
		if !cands[r.Index].Neighbour || lender[i] >= 0 {
			kept = append(kept, r)
		}
	}
	return cut(kept, minScore, limit)
}

// sortByScore sorts out together with its parallel slices lender and own.
func sortByScore(out []Ranked, cands []Candidate, lender []int, own []float64) {
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := out[idx[a]], out[idx[b]]
		if ra.Score != rb.Score {
			return ra.Score > rb.Score
		}
		return cands[ra.Index].ID > cands[rb.Index].ID
	})
	// lender refers to places before the sort: map old place → new place.
	newPlace := make([]int, len(out))
	for n, o := range idx {
		newPlace[o] = n
	}
	o2, l2, w2 := make([]Ranked, len(out)), make([]int, len(out)), make([]float64, len(out))
	for n, o := range idx {
		o2[n], w2[n] = out[o], own[o]
		l2[n] = lender[o]
	}
	copy(out, o2)
	copy(lender, l2)
	copy(own, w2)
}

func slices2(r []Ranked) []Ranked { return append([]Ranked(nil), r...) }

func sortRanked(out []Ranked, cands []Candidate) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return cands[out[i].Index].ID > cands[out[j].Index].ID
	})
}

func cut(out []Ranked, minScore float64, limit int) []Ranked {
	kept := out[:0]
	for _, r := range out {
		if r.Score >= minScore {
			kept = append(kept, r)
		}
	}
	if limit > 0 && len(kept) > limit {
		kept = kept[:limit]
	}
	return kept
}

// IsQuestion reports whether a turn asks something: it ends in a question mark (? or ？),
// or in Japanese text in a question ending (…か, …かな, …かね, …っけ, with or without 。),
// once trailing spaces, closing brackets and emoji are set aside. A bare …の is left out:
// it ends statements as often as questions, and asked as one it is usually written …の？.
func IsQuestion(text string) bool {
	t := strings.TrimRightFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.In(r, unicode.Pe, unicode.Pf, unicode.So, unicode.Sk) || r == '!' || r == '！' || r == '。' || r == '.'
	})
	if strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？") {
		return true
	}
	for _, end := range []string{"か", "かな", "かね", "っけ"} {
		if strings.HasSuffix(t, end) && hasKana(t) {
			return true
		}
	}
	return false
}

// hasKana reports whether s holds hiragana or katakana: a Japanese ending only counts in
// Japanese text.
func hasKana(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}
