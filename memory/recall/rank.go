// Package recall is the pure half of recall: it reads a query's text (Analyze) and ranks the
// candidates a store found (Rank). It does no I/O: the store runs the keyword and vector
// legs, hands over each candidate's raw leg scores and the few memory fields the boosts
// read, and hydrates the ranking it gets back. docs/recall.md explains each constant with
// the measurements behind it.
package recall

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Scoring constants.
const (
	// DefaultAlpha weighs the vector leg in the blend alpha×vector + (1−alpha)×keyword.
	DefaultAlpha = 0.7
	// currentBoost scales relevance by 1 + currentBoost×recency for "what is it now"
	// questions, so the newer of two matching statements wins.
	currentBoost = 0.5
	// whenBoost scales relevance by 1 + whenBoost for memories stating a date or time
	// when the question asks when.
	whenBoost = 0.3
	// monthBoost scales relevance by 1 + monthBoost for memories created in a month the
	// query names ("what did we decide in september").
	monthBoost = 0.2
	// tieBreak bounds the signals added after the blend: at most 0.01, so they reorder
	// only near-equal matches.
	tieBreak = 0.01
)

// Candidate is one memory found by at least one leg, with its raw leg scores and the
// fields the boosts and tie-breakers read.
type Candidate struct {
	ID int64
	// Keyword is the keyword leg's raw score x ≥ 0, higher is better (x = −bm25, FTS5's
	// bm25 being negative); 0 when the keyword leg missed it.
	Keyword float64
	// Vector is the cosine to the query in [−1,1]; 0 when the vector leg did not run or the
	// memory has no vector.
	Vector    float64
	CreatedAt time.Time
	// RefersTo is the span of time the memory's own words name ("the raid moved to next
	// Friday"), resolved against when it was said (ReferredDate); zero when they name none.
	// The date stage reads it in place of CreatedAt.
	RefersTo Window
	Content  string
	// Importance is the effective importance in [0,1]: the base decayed to the time of the
	// query (memory.Memory.EffectiveImportance), so memories nobody recalls fall behind.
	Importance  float64
	Pinned      bool
	AccessCount int
	// Type is the memory's type; the resolution stage prefers decisions.
	Type memory.Type
	// EntityMentions are, for each knowledge-graph entity the memory is linked to, how many
	// memories mention it; the hub stage reads them. Nil when unknown.
	EntityMentions []int
	// Scope is the memory's scope key and Channel its origin channel: together with
	// CreatedAt they place it in a conversation (neighbourhood smoothing).
	Scope, Channel string
	// AuthorName is the display name of whoever said it and Subject the id of the person it
	// is about, if any (named-person boost).
	AuthorName, Subject string
	// Graph is how the memory is linked to the entities the query names (graph boost).
	Graph GraphLink
	// Neighbour marks a memory loaded only because it sits beside a match: Smooth keeps it
	// only if a hit lifts it.
	Neighbour bool
}

// Stages switches the conversation-aware ranking stages on and sets their strengths; a
// zero strength turns a stage off. The store holds the measured product settings
// (ltm's rankStages; docs/recall.md has the numbers).
type Stages struct {
	// DateBoost scales relevance by 1 + DateBoost for memories inside the date window the
	// question names ("last weekend", "3 March"), tapering to 1 over DateHalo outside it,
	// placed by when they were created (and by DateSpans).
	DateBoost float64
	// DateSpans also places a memory by the span its own words name (Candidate.RefersTo),
	// whichever of the two is nearer the window: "the raid moved to next Friday" said on
	// Saturday answers a question about that Friday. Off in the product: measured, it costs
	// dev-conv-ja's temporal questions (docs/recall.md).
	DateSpans bool
	// DateHalo is how far outside the window the date boost tapers off.
	DateHalo time.Duration
	// PersonBoost scales relevance by 1 + PersonBoost for memories written by (or about) a
	// person the question names.
	PersonBoost float64
	// GraphBoost scales relevance by 1 + GraphBoost for memories linked to an entity the
	// question names in the knowledge graph (Candidate.Graph), and by 1 + GraphHop ×
	// GraphBoost for those linked to one of its neighbours (graphboost.go).
	GraphBoost float64
	// GraphHop is the share of GraphBoost a one-hop neighbour's memory gets.
	GraphHop float64
	// Lexicon weighs the keyword leg's concept expansion (Plan.Expansion) against the
	// question's own words; 0 runs no expansion.
	Lexicon float64
	// Past scales relevance by 1 − Past for a memory whose span of time has ended
	// (RefersTo before Options.Asked) when the question asks for the current state
	// (Plan.Current) and names no date: last week's plan is not what happens now. Questions
	// about when something happened, or about a date, are untouched; 0 turns it off.
	Past float64
	// CoMention weighs the keyword leg's search for the words the asker's scopes most often
	// keep beside the question's own (words that travel together) against the question's
	// words; 0 runs no such search.
	CoMention float64
	// Coverage is how many places an author or channel-day may hold before another's
	// candidate goes first, for "in common" questions (Cover); 0 turns it off.
	Coverage int
}

// Options tunes Rank.
type Options struct {
	// Alpha weighs the vector leg when both legs scored (SPEC §5); DefaultAlpha is the
	// product default.
	Alpha float64
	// VectorLeg is set when the vector leg ran (an embedding model is configured and the
	// query was embedded), even if it found nothing.
	VectorLeg bool
	// MinScore drops candidates whose final score is below it.
	MinScore float64
	// Limit keeps the best Limit candidates; 0 keeps all.
	Limit int
	// Dampen switches the post-fusion dampening stages (DefaultDampening is the product's).
	Dampen Dampening
	// Stages sets the conversation-aware stages.
	Stages Stages
	// Asked is when the question is asked: the past stage reads which memories' spans
	// have ended by then. Zero leaves that stage out.
	Asked time.Time
	// Why, when not nil, has one entry per candidate, and Rank records in Why[i] each stage
	// that changed candidate i's relevance, in the order they ran.
	Why [][]Factor
}

// Ranked is one candidate's place in the ranking.
type Ranked struct {
	// Index is the candidate's position in the slice given to Rank.
	Index int
	// Score is the final score, higher is better.
	Score float64
	// Keyword is the normalized keyword score in [0,1), 0 when the keyword leg missed.
	Keyword float64
	// Vector is the candidate's cosine, as given.
	Vector float64
	// Ranked stays 32 bytes: a ranking is sorted several times, and a field more made Rank
	// a third slower; Options.Why holds the explanations.
}

// note records in why that stage scaled a relevance by f.
func note(why []Factor, stage string, f float64) []Factor {
	if f != 1 {
		why = append(why, Factor{Stage: stage, Times: f})
	}
	return why
}

// Factor is one stage's effect on a candidate's relevance (memory.Factor).
type Factor = memory.Factor

// The stages a Factor names.
const (
	FactorCurrent   = "current"   // the question asks for the current state: newer is better
	FactorWhen      = "when"      // the question asks when: the memory states a date or time
	FactorMonth     = "month"     // the memory was said in a month the question names
	FactorDampening = "dampening" // post-fusion dampening (gravity, hubs, resolution)
	FactorDate      = "date"      // the memory's day is in or near the question's window
	FactorPerson    = "person"    // said by or about a person the question names
	FactorGraph     = "graph"     // linked to an entity the question names
	FactorPast      = "past"      // its day has passed and the question asks about now
	// FactorConversation: a match in the same conversation lent it part of its score
	// (Smooth): Times is its score over what it had on its own.
	FactorConversation = "conversation"
)

// Rank scores the candidates of one query and returns them best first (ties: higher id
// first), without those under opt.MinScore and cut to opt.Limit:
//
//	keyword k = x / (1 + xmax)         x the raw keyword score, xmax the best x among the
//	                                   candidates, so k ∈ [0,1) and a better match scores
//	                                   higher
//	vector  v = max(0, cos)
//	rel       = alpha·v + (1−alpha)·k  when both legs scored; else k or v alone
//	rel      ×= 1 + 0.5·recency        "now" questions ("what time is standup now")
//	rel      ×= 1 + 0.3                "when" questions, memory states a date or time
//	rel      ×= 1 + 0.2                the memory was created in a month the query names
//	rel      ×= dampening              opt.Dampen's stages (dampen.go), each ≤ 1
//	score     = rel + 0.01·(0.5·recency + 0.3·importance + 0.2·access)
//
// recency is the memory's creation time scaled to [0,1] across the candidates (newest 1),
// importance is the decayed importance in [0,1] (pinned counts as 1), and access is log(1+count) scaled by the
// largest among the candidates: tie-breakers damped to at most 0.01 so they reorder
// near-equal matches only. The keyword leg counts as having scored when any candidate has
// a keyword score above 0.
func Rank(cands []Candidate, plan *Plan, opt Options) []Ranked {
	var (
		xmax           float64
		oldest, newest int64 = math.MaxInt64, math.MinInt64
		maxAccess      int
	)
	for i := range cands {
		c := &cands[i]
		xmax = max(xmax, c.Keyword)
		ms := unixMilli(c.CreatedAt)
		oldest, newest = min(oldest, ms), max(newest, ms)
		maxAccess = max(maxAccess, c.AccessCount)
	}
	kwOn, vecOn := xmax > 0, opt.VectorLeg
	damp := opt.Dampen.prepare(cands, plan)
	var named authorsNamed
	out := make([]Ranked, 0, len(cands))
	for i := range cands {
		c := &cands[i]
		r := Ranked{Index: i}
		if c.Keyword > 0 {
			r.Keyword = c.Keyword / (1 + xmax)
		}
		if vecOn {
			r.Vector = c.Vector
		}
		var rel float64
		switch {
		case kwOn && vecOn:
			rel = opt.Alpha*max(0, r.Vector) + (1-opt.Alpha)*r.Keyword
		case vecOn:
			rel = max(0, r.Vector)
		default:
			rel = r.Keyword
		}
		recency := 1.0
		if newest > oldest {
			recency = float64(unixMilli(c.CreatedAt)-oldest) / float64(newest-oldest)
		}
		explain := opt.Why != nil
		if plan.Current {
			f := 1 + currentBoost*recency
			rel *= f
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorCurrent, f)
			}
		}
		if plan.When && hasDateOrTime(c.Content) {
			rel *= 1 + whenBoost
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorWhen, 1+whenBoost)
			}
		}
		if len(plan.Months) > 0 && slices.Contains(plan.Months, c.CreatedAt.Month()) {
			rel *= 1 + monthBoost
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorMonth, 1+monthBoost)
			}
		}
		f := damp.factor(i, c, plan, vecOn)
		rel *= f
		if explain {
			opt.Why[i] = note(opt.Why[i], FactorDampening, f)
		}
		if opt.Stages.Past > 0 && plan.Current && plan.Window.IsZero() && !opt.Asked.IsZero() &&
			!c.RefersTo.IsZero() && !c.RefersTo.To.After(opt.Asked) {
			rel *= 1 - opt.Stages.Past
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorPast, 1-opt.Stages.Past)
			}
		}
		if opt.Stages.DateBoost > 0 && !plan.Window.IsZero() {
			f := 1 + opt.Stages.DateBoost*dateWeight(plan.Window, c, opt.Stages.DateHalo, opt.Stages.DateSpans)
			rel *= f
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorDate, f)
			}
		}
		if opt.Stages.PersonBoost > 0 && len(plan.People) > 0 && named.namesPerson(plan, c) {
			rel *= 1 + opt.Stages.PersonBoost
			if explain {
				opt.Why[i] = note(opt.Why[i], FactorPerson, 1+opt.Stages.PersonBoost)
			}
		}
		if before := rel; opt.Stages.GraphBoost > 0 {
			rel = graphBoost(rel, c.Graph, opt.Stages)
			if explain && before > 0 {
				opt.Why[i] = note(opt.Why[i], FactorGraph, rel/before)
			}
		}
		importance := c.Importance
		if c.Pinned {
			importance = 1
		}
		access := 0.0
		if maxAccess > 0 {
			access = math.Log1p(float64(c.AccessCount)) / math.Log1p(float64(maxAccess))
		}
		r.Score = rel + tieBreak*(0.5*recency+0.3*importance+0.2*access)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(cands[b.Index].ID, cands[a.Index].ID)
	})
	kept := out[:0]
	for _, r := range out {
		if r.Score >= opt.MinScore {
			kept = append(kept, r)
		}
	}
	if opt.Limit > 0 && len(kept) > opt.Limit {
		kept = kept[:opt.Limit]
	}
	return kept
}

// unixMilli is t in Unix milliseconds, with the zero time (a row without a creation time)
// at 0 as the store writes it, so such a row counts as the oldest, not as year 1.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// dateWeight is how far the date stage places candidate c in the question's window w: by
// its creation time or by the span its words name, whichever is nearer. A memory is about
// both days: "we played on Friday" said on Monday answers a question about Friday, and a
// plan for Friday said on Monday is still what was said on Monday ("what did we do on
// Monday?" is answered by what people said that day).
//
// Without spans (Stages.DateSpans off) only the creation time counts.
func dateWeight(w Window, c *Candidate, halo time.Duration, spans bool) float64 {
	said := windowWeight(w, c.CreatedAt, halo)
	if !spans || c.RefersTo.IsZero() {
		return said
	}
	return max(said, spanWeight(w, c.RefersTo, halo))
}

// windowWeight is 1 for t inside w, falling linearly to 0 at halo outside it.
func windowWeight(w Window, t time.Time, halo time.Duration) float64 {
	d := w.Distance(t)
	if d == 0 {
		return 1
	}
	if halo <= 0 || d >= halo {
		return 0
	}
	return 1 - float64(d)/float64(halo)
}

// spanWeight is 1 for a span r that overlaps w at all: a memory about the first week of
// March answers a question about 3 March, and one about 3 March a question about that
// week. A span outside w counts from its middle, as a creation time would: the day after
// the window is half a day from it, not adjacent, so it is not weighed as if inside.
func spanWeight(w, r Window, halo time.Duration) float64 {
	if w.Overlaps(r) {
		return 1
	}
	return windowWeight(w, r.From.Add(r.To.Sub(r.From)/2), halo)
}
