package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Downloads of everything the page may show the member: the export document of /memory
// export (which `kioku memories import` and /memory import read back), and the same
// memories as Markdown for people.

// exportFile is the member's export under their audience.
func (mm *myMemory) exportFile(w http.ResponseWriter, r *http.Request, v *visit) (memory.ExportFile, bool) {
	f, err := mm.deps.Transfer.ExportWithin(r.Context(), v.owner(), v.audience(r))
	if err != nil {
		mm.view.internal(w, r, v, "couldn't export a member's memories", err)
		return f, false
	}
	mm.log.InfoContext(r.Context(), "memories exported from the web dashboard", "user_id", v.sess.UserID, "memories", len(f.Memories))
	return f, true
}

// attach sets the headers of a download named kioku-memories-DATE.ext.
func attach(w http.ResponseWriter, f memory.ExportFile, contentType, ext string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="kioku-memories-%s.%s"`, f.ExportedAt.Format("20060102"), ext))
}

func (mm *myMemory) exportJSON(w http.ResponseWriter, r *http.Request, v *visit) {
	f, ok := mm.exportFile(w, r, v)
	if !ok {
		return
	}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		mm.view.internal(w, r, v, "couldn't encode an export", err)
		return
	}
	attach(w, f, "application/json", "json")
	_, _ = w.Write(append(raw, '\n'))
}

func (mm *myMemory) exportMarkdown(w http.ResponseWriter, r *http.Request, v *visit) {
	f, ok := mm.exportFile(w, r, v)
	if !ok {
		return
	}
	attach(w, f, "text/markdown; charset=utf-8", "md")
	_, _ = w.Write([]byte(markdownOf(v.lang, f)))
}

// markdownOf renders an export for people: a heading per memory with its number, type,
// origin and day, its words quoted (so a line of a memory that looks like a heading or a
// list stays inside its quote) and its tags.
func markdownOf(l i18n.Locale, f memory.ExportFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", i18n.T(l, "web.export.title"),
		i18n.N(l, "web.export.summary", len(f.Memories), f.ExportedAt.UTC().Format("2006-01-02 15:04 MST")))
	for _, m := range f.Memories {
		origin := i18n.T(l, "line.from_a_server")
		if m.GuildID == "" {
			origin = i18n.T(l, "line.from_dms")
		}
		fmt.Fprintf(&b, "\n## #%d · %s · %s · %s\n\n", m.ID, i18n.T(l, i18n.Key("choice.type."+string(m.Type))), origin,
			m.CreatedAt.UTC().Format("2006-01-02"))
		for line := range strings.SplitSeq(m.Content, "\n") {
			b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
		}
		if len(m.Tags) > 0 {
			fmt.Fprintf(&b, "\n%s: %s\n", i18n.T(l, "web.memory.tags"), strings.Join(m.Tags, ", "))
		}
		if m.Pinned {
			fmt.Fprintf(&b, "\n%s\n", i18n.T(l, "web.memory.pinned"))
		}
	}
	return b.String()
}
