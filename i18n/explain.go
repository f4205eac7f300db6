package i18n

import (
	"fmt"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// Explain says, in l, what placed a search result (/memory search explain:true, the
// dashboard's explain view): its keyword and vector scores, each ranking stage that moved it
// (and the match that lent its score: the search read only what the reader may see, so they
// may see that one too), and its lifecycle at now when it is not active (past ranks lower
// for questions about now; a superseded or archived memory is there only because the search
// asked for it).
func Explain(l Locale, r memory.SearchResult, now time.Time) string {
	parts := []string{T(l, "explain.scores", r.Keyword, r.Vector)}
	for _, f := range r.Why {
		name := T(l, Key("explain.stage."+f.Stage))
		if strings.HasPrefix(name, "explain.stage.") {
			name = f.Stage
		}
		part := fmt.Sprintf("%s ×%.2f", name, f.Times)
		if f.By != 0 {
			part += " " + T(l, "explain.lent", f.By)
		}
		parts = append(parts, part)
	}
	if lc := r.Memory.LifecycleAt(now); lc != memory.LifecycleActive {
		parts = append(parts, T(l, Key("choice.lifecycle."+string(lc))))
	}
	return strings.Join(parts, " · ")
}
