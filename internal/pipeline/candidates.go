package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/backoff"
)

// maxQueryBytes bounds the recall query made from a fact: its beginning says what it is
// about, and a 2000-character keyword query costs far more than it adds.
const maxQueryBytes = 600

// candidateOverfetch is how many recall results per candidate slot are read before the
// visibility filter, so that memories the conversation may not see do not crowd out those
// it may.
const candidateOverfetch = 4

// entitySlots is how many candidate slots the memories about the fact's entities may take
// from the lowest-ranked recall results: "Kate relocated to Tokyo" must meet "Katherine's
// home is Osaka" even when memories sharing its words fill the list.
const entitySlots = 2

// candidates returns the memories fact f is compared with: the best MaxCandidates of
// owner's scope that are visible where the conversation happened. That is, memories that
// originated in the conversation's guild (in a DM, DM-origin personal memories only) and,
// when the pipeline knows the channel's audience, that the audience allows. The decision
// stage can only name a candidate, so a conversation never updates or deletes a memory it
// could not see (issue "decisions cross origins").
func (p *worker) candidates(ctx context.Context, ch memory.Channel, aud *memory.Audience, owner memory.Owner, f Fact) ([]*memory.Memory, error) {
	// Comparing a new fact with stored memories is not anyone using them: CountAccess stays
	// false, so the pipeline never keeps a memory from decaying.
	q := memory.SearchQuery{Text: truncateUTF8(f.Content, maxQueryBytes), Limit: MaxCandidates * candidateOverfetch}
	if owner.Scope == memory.ScopePersonal && ch.GuildID != "" {
		q.Visible = []memory.Visible{{Owner: owner, OriginGuildID: ch.GuildID}}
	} else {
		q.Owners = []memory.Owner{owner}
	}
	results, err := p.finder.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	cands := make([]*memory.Memory, 0, MaxCandidates)
	for _, r := range results {
		m := r.Memory
		if m.GuildID != ch.GuildID || !aud.Allows(m) {
			continue
		}
		cands = append(cands, m)
		if len(cands) == MaxCandidates {
			break
		}
	}
	q.Limit = entitySlots * candidateOverfetch
	related, err := p.finder.AboutSameEntities(ctx, q)
	if err != nil {
		// The recall candidates stand on their own; the graph only adds to them.
		slog.Debug("decision candidates without the graph", slog.Any("err", err))
		return cands, nil
	}
	recalled := make(map[int64]bool, len(results))
	for _, r := range results {
		recalled[r.Memory.ID] = true
	}
	return withRelated(cands, related, recalled, ch, aud), nil
}

// withRelated puts up to entitySlots memories of related into cands, in place of its
// lowest-ranked entries when it is full: those the conversation may see that recall did not
// return at all (a memory recall ranked is there for its words already; one it did not is
// what only the shared entity finds).
func withRelated(cands, related []*memory.Memory, recalled map[int64]bool, ch memory.Channel, aud *memory.Audience) []*memory.Memory {
	added := 0
	for _, m := range related {
		if added == entitySlots {
			break
		}
		if m.GuildID != ch.GuildID || !aud.Allows(m) || recalled[m.ID] {
			continue
		}
		if len(cands) < MaxCandidates {
			cands = append(cands, m)
		} else {
			cands[MaxCandidates-1-added] = m
		}
		added++
	}
	return cands
}

// audience is the channel rule of the conversation's channel, nil when there is none (a DM,
// or no Audience provider configured).
func (p *worker) audience(ctx context.Context, ch memory.Channel) *memory.Audience {
	if p.cfg.Audience == nil || ch.GuildID == "" {
		return nil
	}
	return p.cfg.Audience(ctx, ch.GuildID, ch.ChannelID)
}

// errRulesUnknown stops a job whose conversation's audience is unknown (its server's roles
// are not known to this process nor stored): unknown means not visible, so rather than
// decide without candidates the job is put back, without spending an attempt, until the
// roles are known.
var errRulesUnknown = errors.New("the server's roles are not known")

// rulesWaitBase and rulesWaitMax bound the wait of a job for its server's roles: it doubles
// with each postponement, from a moment (a restart before the server's GUILD_CREATE) to a
// long outage.
const (
	rulesWaitBase = 30 * time.Second
	rulesWaitMax  = 30 * time.Minute
)

// rulesWait is the wait before the job's nth try since its server's roles were unknown.
func rulesWait(n int) time.Duration {
	return backoff.Exponential(rulesWaitBase, rulesWaitMax, n-1)
}
