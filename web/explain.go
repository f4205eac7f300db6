package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// explainText says what placed a search result, as /memory search explain:true does: its
// keyword and meaning scores, each ranking stage that moved it (and the match that lent its
// score, which the search read under the same audience, so the member may see it), and its
// lifecycle when it is not active.
func explainText(l i18n.Locale, r memory.SearchResult, now time.Time) string {
	parts := []string{i18n.T(l, "explain.scores", r.Keyword, r.Vector)}
	for _, f := range r.Why {
		name := i18n.T(l, i18n.Key("explain.stage."+f.Stage))
		if strings.HasPrefix(name, "explain.stage.") {
			name = f.Stage
		}
		part := fmt.Sprintf("%s ×%.2f", name, f.Times)
		if f.By != 0 {
			part += " " + i18n.T(l, "explain.lent", f.By)
		}
		parts = append(parts, part)
	}
	if lc := r.Memory.LifecycleAt(now); lc != memory.LifecycleActive {
		parts = append(parts, i18n.T(l, i18n.Key("choice.lifecycle."+string(lc))))
	}
	return strings.Join(parts, " · ")
}
