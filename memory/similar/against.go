package similar

import (
	"time"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/recall"
)

// Against compares a new statement, said at said, with a stored memory m (CompareCosine
// with cosine, or Compare when cosine is 0). Relative days are read as the store reads
// them, each against when it was said: "the meetup is next Saturday" said in June and said
// again in September name different days, so they are not the same statement, however
// alike their words. A statement naming no day, or only an ambiguous one, is compared by
// its words alone.
func Against(content string, said time.Time, m *memory.Memory, cosine float64) Verdict {
	v := CompareCosine(content, m.Content, cosine)
	if !v.Similar || m.RefersTo.IsZero() {
		return v
	}
	w, ok := recall.ReferredDate(content, said)
	if ok && (!w.From.Equal(m.RefersTo) || !w.To.Equal(m.RefersToEnd)) {
		return Verdict{Score: v.Score, Apart: ApartDay}
	}
	return v
}
