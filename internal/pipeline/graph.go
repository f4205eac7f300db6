package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// recordGraph hands the extraction's entity triples to the knowledge graph after the job's
// facts committed, in a write of its own: the graph is a recall aid, so a failure here is
// logged and the facts stand (SPEC §4: a graph failure never reverts facts). The graph is
// the conversation's guild's, or the member's for a DM; the speakers are the triples'
// sources and the members their names may mean. Nothing is recorded where the mode applies
// no additions (shadow, frozen, off) or without a graph store.
func (p *worker) recordGraph(ctx context.Context, run *jobRun, ch memory.Channel, mode memory.PipelineMode,
	recs batchRecords, entities []Entity, startedAt time.Time) {
	if p.graph == nil || len(entities) == 0 || (mode != memory.PipelineControlled && mode != memory.PipelineFull) ||
		len(recs.speakers) == 0 {
		return
	}
	b := graph.Batch{Owner: memory.ServerOwner(ch.GuildID), StartedAt: startedAt}
	if ch.GuildID == "" {
		b.Owner = memory.PersonalOwner(recs.speakers[0].id)
	}
	for _, who := range recs.speakers {
		b.People = append(b.People, graph.Person{UserID: who.id, Name: who.name})
		b.Sources = append(b.Sources, who.id)
	}
	for _, e := range entities {
		b.Triples = append(b.Triples, graph.Triple{Source: e.Source, Relationship: e.Relationship, Target: e.Target,
			Confidence: e.Confidence})
	}
	n, err := p.graph.AddTriples(ctx, b)
	if err != nil {
		run.log.Warn("couldn't record the knowledge graph; the facts are kept", slog.Any("err", err))
		return
	}
	run.log.Debug("knowledge graph recorded", slog.Int("relations", n))
}
