package ltm

import (
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/vecindex"
)

// metaOf is what the vector index may filter m on without reading SQLite.
func metaOf(m *memory.Memory) vecindex.Meta {
	return vecindex.Meta{OriginGuild: m.GuildID, Channel: m.Provenance.ChannelID, CreatedAt: millis(m.CreatedAt), Type: string(m.Type),
		Pinned: m.Pinned, Importance: m.Importance, Tags: slices.Clone(m.Tags), AuthorID: m.Provenance.AuthorID}
}

// vectorFilter mirrors the scope and filter rules the vector index can check without SQL
// (origin guild, type, pinned, since, until, author, importance, tags, audience), so its shortlist is spent
// only on rows that can pass: a filter applied after the top k would let failing rows crowd
// out passing ones. SQL re-checks everything when the rows are loaded. It returns nil when
// nothing needs checking. The index holds the base importance, which decay only lowers, so
// its importance check is a necessary condition; SQL applies the decayed one.
func vectorFilter(v memory.Visible, q *memory.SearchQuery) *vecindex.Filter {
	origin := ""
	if v.Owner.Scope == memory.ScopePersonal {
		origin = v.OriginGuildID
	}
	since, until := millis(q.Since), millis(q.Until)
	if origin == "" && len(q.Types) == 0 && !q.PinnedOnly && since == 0 && until == 0 && q.AuthorID == "" && q.ImportanceMin <= 0 &&
		len(q.Tags) == 0 && q.Audience == nil {
		return nil
	}
	f := &vecindex.Filter{OriginGuild: origin, PinnedOnly: q.PinnedOnly, Since: since, Until: until, AuthorID: q.AuthorID,
		ImportanceMin: q.ImportanceMin}
	for _, t := range q.Types {
		f.Types = append(f.Types, string(t))
	}
	for _, t := range q.Tags {
		f.Tags = append(f.Tags, strings.ToLower(t))
	}
	if q.Audience != nil {
		f.RestrictChannels, f.Channels = true, q.Audience.Channels
	}
	return f
}

// VectorHit is one result of NearestMemories.
type VectorHit struct {
	ID     int64
	Cosine float32
}

// NearestMemories runs the vector leg of recall alone: the k memories of owner's scope
// whose vectors are closest to vec by cosine, best first, from the in-memory index (no SQL,
// no embedding call). exact forces a full float32 scan instead of the shortlist search;
// benchmarks use it as the baseline and to measure the shortlist's recall.
func (s *Recall) NearestMemories(owner memory.Owner, vec []float32, k int, exact bool) []VectorHit {
	if len(vec) == 0 {
		return nil
	}
	q := make([]float32, len(vec))
	copy(q, vec)
	if !vecindex.Normalize(q) {
		return nil
	}
	hits := s.db.recall.vectors.Search(owner.Key(), q, k, nil, exact)
	out := make([]VectorHit, len(hits))
	for i, h := range hits {
		out[i] = VectorHit{ID: h.ID, Cosine: h.Cosine}
	}
	return out
}
