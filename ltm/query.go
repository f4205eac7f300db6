package ltm

import (
	"strings"

	"github.com/kioku-bot/kioku/memory/recall"
)

// ftsExpr renders the plan as an FTS5 expression: every term and adjacent pair quoted (so
// user text can never be FTS syntax) and OR-ed, so a memory matching some words still
// scores, and one holding a query phrase scores that phrase's weight on top.
func ftsExpr(p *recall.Plan, withPairs bool) string {
	var b strings.Builder
	for _, t := range p.Terms {
		if b.Len() > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(quoteFTS(t))
	}
	if withPairs {
		for _, pr := range p.Pairs {
			b.WriteString(" OR ")
			b.WriteString(quoteFTS(pr[0] + " " + pr[1]))
		}
	}
	return b.String()
}

func quoteFTS(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
