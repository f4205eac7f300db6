package pipeline

// Proposals: each fact of an extraction batch becomes a proposal, decided against the
// memories it resembles and gated by privacy, confidence and the pipeline mode.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/similar"
)

// factBatch is what every fact of one extraction batch is proposed in: the job's run,
// the pipeline mode, the conversation's channel and the audience its memories must be
// visible to, and the turns the batch covers (after from, up to through).
type factBatch struct {
	run           *jobRun
	mode          memory.PipelineMode
	ch            memory.Channel
	aud           *memory.Audience
	from, through int64
}

// factToPropose is fact number index of a batch, with who it is attributed to.
type factToPropose struct {
	factBatch
	index int
	fact  Fact
	att   attribution
}

// propose turns a fact into a proposal: apply the privacy and confidence gates, find
// candidates among the memories visible in this conversation, decide (with the model only
// when there are candidates), apply the mode, and look for contradictions.
func (p *worker) propose(ctx context.Context, in factToPropose) (memory.Proposal, error) {
	f, subject := in.fact, in.att.subject
	prop := newProposal(in)
	// Privacy: nothing is written about people who chose partial or full privacy (a fact
	// about them is theirs whatever its label), and the history row keeps no content.
	if subject != nil && (subject.privacy == memory.PrivacyFull || subject.privacy == memory.PrivacyPartial) {
		prop.Record, prop.Redact, prop.Reason = memory.ActionBlock, true, "privacy: "+string(subject.privacy)
		return prop, nil
	}
	if f.Confidence < p.cfg.ConfidenceGate {
		prop.Record = memory.ActionSkip
		prop.Reason = fmt.Sprintf("fact confidence %.2f is below %.2f", f.Confidence, p.cfg.ConfidenceGate)
		return prop, nil
	}
	cands, err := p.candidates(ctx, in.ch, in.aud, prop.Owner, f)
	if err != nil {
		return prop, fmt.Errorf("couldn't find candidates for fact %d: %w", in.index, err)
	}
	d, err := p.decide(ctx, in, cands)
	if err != nil {
		return prop, err
	}
	meta := prop.Metadata
	meta["decision"] = d.Action
	meta["confidence"] = d.Confidence
	if d.ByModel {
		meta["candidates"] = candidateIDs(cands)
	}
	if len(d.Warnings) > 0 {
		meta["warnings"] = d.Warnings
	}
	if d.Invalid != "" {
		in.run.log.Warn("decision dropped", slog.Int("fact", in.index), slog.String("why", d.Invalid))
		prop.Record, prop.Reason = memory.ActionSkip, d.Invalid
		return prop, nil
	}
	prop.Action, prop.TargetID, prop.Reason = d.Action, d.TargetID, d.Reason
	prop.Memory.Content = d.Content
	if d.Action == memory.ProposeAdd {
		if c := nearDuplicate(d.Content, p.now(), cands); c != nil {
			// The model added what a memory the conversation may see already says in other
			// words: nothing to write (SPEC: near-duplicates on every write path).
			prop.Action, prop.TargetID, prop.Reason = memory.ProposeNone, c.ID, fmt.Sprintf("says again what #%d says", c.ID)
			meta["decision_overruled"] = "near-duplicate"
		}
	}
	if d.Action.Writes() {
		for _, c := range cands {
			if c.ID != d.TargetID && similar.Contradicts(d.Content, c.Content) {
				prop.Contradicts = append(prop.Contradicts, c.ID)
			}
		}
	}
	if d.Confidence < p.cfg.ConfidenceGate {
		prop.Record = memory.ActionSkip
		meta["gate"] = fmt.Sprintf("decision confidence %.2f is below %.2f", d.Confidence, p.cfg.ConfidenceGate)
		return prop, nil
	}
	if d.Action == memory.ProposeNone {
		return prop, nil
	}
	if rec, why := gate(in.mode, d.Action); rec != "" {
		prop.Record = rec
		meta["gate"] = why
	}
	return prop, nil
}

// newProposal is the fact as a memory to add, before any gate or decision: its owner
// (the server, or the subject's personal memory), provenance, evidence and the metadata
// the history row keeps.
func newProposal(in factToPropose) memory.Proposal {
	f, att, ch := in.fact, in.att, in.ch
	owner := memory.ServerOwner(ch.GuildID)
	if att.subject != nil {
		owner = memory.PersonalOwner(att.subject.id)
	}
	prov := memory.Provenance{ChannelID: ch.ChannelID}
	if att.author != nil {
		prov.AuthorID, prov.Author = att.author.id, att.author.name
	}
	evidenceTurns := make([]int64, 0, len(att.evidence))
	for _, t := range att.evidence {
		evidenceTurns = append(evidenceTurns, t.ID)
		if att.author != nil && t.UserID == att.author.id {
			prov.MessageID = t.MessageID // the author's latest message it rests on
		}
	}
	meta := map[string]any{"job": in.run.job.ID, "fact": in.index, "turns": []int64{in.from + 1, in.through},
		"evidence_turns": evidenceTurns, "fact_confidence": f.Confidence, "mode": in.mode}
	prop := memory.Proposal{
		Action: memory.ProposeAdd,
		Owner:  owner,
		Memory: memory.Memory{Type: f.Type, Content: f.Content, Confidence: f.Confidence, GuildID: ch.GuildID,
			Provenance: prov},
		Metadata:      meta,
		Evidence:      evidenceOf(att.evidence),
		MayEditServer: att.mayEditServer,
	}
	if att.subject != nil {
		prop.Memory.SubjectID = att.subject.id
	}
	return prop
}

// decide decides the fact against its candidates: without the model when the same
// content exists or nothing similar does, from the checkpoint when an earlier run of the
// job decided it, else by asking the model and keeping its decision in the checkpoint.
func (p *worker) decide(ctx context.Context, in factToPropose, cands []*memory.Memory) (Decision, error) {
	run, f, cp := in.run, in.fact, in.run.payload.Checkpoint
	hash := memory.Hash(f.Content)
	exact := false
	for _, c := range cands {
		exact = exact || c.Hash == hash
	}
	prev, done := cp.Decisions[in.index]
	switch {
	case exact || len(cands) == 0:
		// Nothing to ask: the same content exists (the write records it as deduped), or
		// nothing similar does.
		return addWithoutModel(f), nil
	case done:
		return prev, nil
	}
	if p.now().Sub(run.beat) > p.cfg.LeaseFor/3 {
		// A long batch of decisions: renew the lease before the reaper takes the job,
		// and keep the decisions made so far.
		if err := p.heartbeat(ctx, run); err != nil {
			return Decision{}, err
		}
	}
	reply, err := p.complete(ctx, run, memory.PurposeDecision, DecisionMessages(f, cands, p.quote))
	if err != nil {
		return Decision{}, err
	}
	d := ParseDecision(reply, f, cands)
	cp.Decisions[in.index] = d
	for _, w := range d.Warnings {
		run.log.Warn("decision warning", slog.Int("fact", in.index), slog.String("warning", w))
	}
	return d, nil
}

// proposeAll attributes each fact to the batch's speakers and proposes the ones that can
// be attributed, in order; a fact that cannot is dropped with a warning.
func (p *worker) proposeAll(ctx context.Context, b factBatch, recs batchRecords, facts []Fact) ([]memory.Proposal, error) {
	var props []memory.Proposal
	for i, f := range facts {
		att, warnings, why, ok := recs.attribute(f, b.ch.GuildID == "")
		for _, w := range warnings {
			b.run.log.Warn("extraction warning", slog.Int("fact", i), slog.String("warning", w))
		}
		if !ok {
			b.run.log.Warn("fact dropped", slog.Int("fact", i), slog.String("why", why))
			continue
		}
		prop, err := p.propose(ctx, factToPropose{factBatch: b, index: i, fact: f, att: att})
		if err != nil {
			return nil, err
		}
		props = append(props, prop)
	}
	return props, nil
}

func candidateIDs(cands []*memory.Memory) []int64 {
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return ids
}

// nearDuplicate is the candidate content, said at now, says again in other words, nil when
// none does. Candidates are memories the conversation may see, so the answer depends on
// nothing else.
func nearDuplicate(content string, now time.Time, cands []*memory.Memory) *memory.Memory {
	hash := memory.Hash(content)
	for _, c := range cands {
		if c.Hash != hash && similar.Against(content, now, c, 0).Similar { // the same words: the write dedups
			return c
		}
	}
	return nil
}
